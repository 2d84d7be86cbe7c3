/**
 * The HTTP gateway's sessions, by `Mcp-Session-Id`. A session exists once an initialize was
 * answered with its id (or a client names an id the gateway has not seen: it may have been
 * started mid-session); it ends on DELETE, on a 404 from the server (expired), or when the
 * gateway holds too many (the least recently used one goes). A server without sessions has a
 * template session, from its initialize, whose forks audit one exchange each.
 */
import { randomUUID } from 'node:crypto';
import type { AuditSession } from './audit-session.ts';

/** Sessions held at most; beyond, the least recently used is ended. */
export const MAX_SESSIONS = 10_000;

/** The sessions of one gateway. */
export class HttpSessions {
  private readonly byId = new Map<string, AuditSession>();
  /** The session of a server that gives no session ids (its initialize's), once seen. */
  private template: AuditSession | undefined;
  /** Exchanges with such a server still running. */
  private readonly forks = new Set<AuditSession>();

  constructor(
    private readonly newSession: (taskId: string) => AuditSession,
    private readonly maxSessions = MAX_SESSIONS,
  ) {}

  /** How many sessions are held (forks excluded). */
  get size(): number {
    return this.byId.size;
  }

  /** The session a request naming this id belongs to (made when unknown), now the most recent. */
  of(id: string): AuditSession {
    let s = this.byId.get(id);
    if (s) this.byId.delete(id);
    else s = this.newSession(id);
    this.byId.set(id, s);
    this.evict();
    return s;
  }

  /** The session of a request without an id: a fork of a session-less server's, else a new one (an initialize). */
  anonymous(): { session: AuditSession; fork: boolean } {
    if (this.template) {
      const session = this.template.fork();
      this.forks.add(session);
      return { session, fork: true };
    }
    return { session: this.newSession(randomUUID()), fork: false };
  }

  /** An initialize was answered: its session is filed under the id given, or becomes the template. */
  initialized(session: AuditSession, id: string | undefined): void {
    if (id === undefined) {
      this.template ??= session;
      return;
    }
    session.retask(id);
    this.byId.set(id, session);
    this.evict();
  }

  /** A fork's exchange is over: what it did not see answered will not be. */
  done(fork: AuditSession): void {
    fork.close('the answer to the request held no response to this call');
    this.forks.delete(fork);
  }

  /** Ends a session (DELETE, or the server no longer knows it). */
  end(id: string, why: string): void {
    this.byId.get(id)?.close(why);
    this.byId.delete(id);
  }

  /** Ends every session (the gateway stops). */
  closeAll(why: string): void {
    for (const s of [...this.byId.values(), ...this.forks]) s.close(why);
    this.byId.clear();
    this.forks.clear();
  }

  private evict(): void {
    while (this.byId.size > this.maxSessions) {
      const [oldest] = this.byId.keys();
      if (oldest === undefined) return;
      this.end(oldest, 'the gateway held too many sessions and ended the least recently used');
    }
  }
}
