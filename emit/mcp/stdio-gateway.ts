/**
 * The stdio gateway: the MCP client launches `tool-audit mcp -- <server command>` instead of
 * the server. Bytes pass through as they come, in both directions; the gateway parses a copy of
 * each newline-delimited message for the audit. With enforcement on, a client line is held
 * until its call is judged (in order: later lines wait behind it), and a refused call is
 * answered by the gateway, never written to the server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { MinimalLogger } from '../../platform/minimal-logger.ts';
import { exactOf, type AuditSession } from './audit-session.ts';
import { OwnRequests, PIN_LIST_TIMEOUT_MS } from './own-requests.ts';
import { refusalResponse, type CallGuard } from './call-guard.ts';
import { ClientWriter } from './client-writer.ts';
import { batchRefusal, batchWithCall, isToolsCall } from './json-rpc.ts';

/** What the stdio gateway runs with. */
export interface StdioGatewayOptions {
  command: string;
  args: string[];
  /** The server's environment; default the gateway's own, as if the client had launched the server. */
  env?: NodeJS.ProcessEnv;
  session: AuditSession;
  guard: CallGuard | undefined;
  /** The client's side: default process.stdin / process.stdout. */
  input: Readable;
  output: Writable;
  logger: MinimalLogger;
}

/** A running stdio gateway. */
export interface StdioGateway {
  /** Resolves with the server's exit status (128 + signal number when killed) once it exited. */
  readonly exited: Promise<number>;
  /** Asks the server to stop (SIGTERM, SIGKILL after 2 s). */
  stop(): void;
  readonly pid: number | undefined;
}

/**
 * Splits a byte stream into lines, copying each byte at most once: the pieces of an unfinished
 * line are kept as they came and joined when its newline arrives (a 10 MB line over 64 KB
 * chunks is one join, not one per chunk).
 */
export class LineSplitter {
  private pieces: Buffer[] = [];

  /** The complete lines (without their newline) a chunk finishes. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    let nl = chunk.indexOf(0x0a);
    while (nl !== -1) {
      const tail = chunk.subarray(start, nl);
      lines.push(this.pieces.length > 0 ? Buffer.concat([...this.pieces, tail]) : tail);
      this.pieces = [];
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.length) this.pieces.push(chunk.subarray(start));
    return lines;
  }

  /** The unfinished line's bytes (the stream ended without its newline), then empty. */
  rest(): Buffer {
    const out = Buffer.concat(this.pieces);
    this.pieces = [];
    return out;
  }
}

/** A line's text and its JSON (undefined when it is not JSON: passed through, not audited). */
function parseLine(line: Buffer): { text: string; msg: unknown } {
  const text = line.toString('utf8');
  if (text === '') return { text, msg: undefined };
  try {
    return { text, msg: JSON.parse(text) };
  } catch {
    return { text, msg: undefined };
  }
}

/** Starts the server and the two pumps. */
export function startStdioGateway(o: StdioGatewayOptions): StdioGateway {
  const child = spawn(o.command, o.args, { ...(o.env ? { env: o.env } : {}), stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number>((resolve) => {
    child.once('error', (err) => {
      o.logger.error({ err: err.message, command: o.command }, 'the MCP server could not be started');
      resolve(127);
    });
    // 'close', not 'exit': the server's stdout is read to its end first, so an answer it sent
    // just before exiting is still matched to its call.
    child.once('close', (code, signal) => resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)));
  });
  const client = new ClientWriter(o.output, { pause: () => child.stdout?.pause(), resume: () => child.stdout?.resume() });
  // Under a pin the gateway asks the server's tools/list itself; its answers are not the client's.
  const own = o.guard?.pinned ? new OwnRequests() : undefined;
  pumpServer(child, client, o, own);
  pumpClient(child, client, o, own);
  let killer: NodeJS.Timeout | undefined;
  void exited.then(() => {
    clearTimeout(killer);
    own?.failAll('the MCP server exited');
    o.session.close('the MCP server exited before answering');
  });
  return {
    exited,
    pid: child.pid,
    stop: () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), 2_000);
      killer.unref();
    },
  };
}

function pumpServer(child: ChildProcess, client: ClientWriter, o: StdioGatewayOptions, own: OwnRequests | undefined): void {
  const lines = new LineSplitter();
  child.stdout?.on('data', (chunk: Buffer) => {
    // Bytes pass as they come, unless the gateway has requests of its own: then whole lines,
    // its answers taken out.
    if (!own) client.server(chunk);
    for (const line of lines.push(chunk)) {
      const { msg } = parseLine(line);
      if (own?.answer(msg)) continue;
      if (own) client.server(Buffer.concat([line, NEWLINE]));
      if (msg !== undefined) o.session.fromServer(msg);
    }
  });
  child.stdout?.once('end', () => {
    // Line by line, an unfinished last line would be lost: it goes out as it came.
    if (own) client.server(lines.rest());
    client.end();
  });
}

function pumpClient(child: ChildProcess, client: ClientWriter, o: StdioGatewayOptions, own: OwnRequests | undefined): void {
  const toServer = child.stdin;
  if (!toServer) return;
  toServer.on('error', (err) => o.logger.warn({ err: err.message }, 'writing to the MCP server failed'));
  /** Writes to the server; false when its stdin is gone (nothing written). */
  const send = (data: Buffer | string): boolean => {
    if (toServer.writableEnded || toServer.destroyed) return false;
    // A server that reads slowly slows the client down.
    if (!toServer.write(data)) {
      o.input.pause();
      toServer.once('drain', () => o.input.resume());
    }
    return true;
  };
  const lines = new LineSplitter();
  const guard = o.guard;
  if (!guard) {
    o.input.on('data', (chunk: Buffer) => {
      send(chunk);
      for (const line of lines.push(chunk)) {
        const { msg, text } = parseLine(line);
        if (msg !== undefined) o.session.fromClient(msg, text);
      }
    });
    o.input.on('end', () => toServer.end());
    return;
  }
  // Lines wait behind a call being judged so that the server sees them in the client's order.
  let queue: Promise<void> = Promise.resolve();
  let judging = false;
  const forward = (line: Buffer, msg: unknown, text: string): void => {
    if (msg !== undefined) o.session.fromClient(msg, text);
    send(Buffer.concat([line, NEWLINE]));
  };
  o.input.on('data', (chunk: Buffer) => {
    for (const line of lines.push(chunk)) {
      const { msg, text } = parseLine(line);
      if (batchWithCall(msg)) {
        client.inject(JSON.stringify(batchRefusal(msg)));
        continue;
      }
      const call = isToolsCall(msg) ? msg : undefined;
      if (!call && !judging) {
        forward(line, msg, text);
        continue;
      }
      judging = true;
      // The chain never rejects: a failure is logged and the lines after it still go.
      queue = queue
        .then(async () => (call ? admit(call, line, text, client, send, guard, o, own) : forward(line, msg, text)))
        .catch((err: unknown) => o.logger.error({ err: (err as Error).message }, 'a client line could not be relayed'));
      const mark = queue;
      void mark.then(() => {
        if (queue === mark) judging = false;
      });
    }
  });
  // Stdin's end waits for the lines still being judged.
  o.input.on('end', () => void queue.then(() => toServer.end()));
}

const NEWLINE = Buffer.from('\n');

async function admit(
  call: Record<string, unknown> & { id: string | number },
  line: Buffer,
  text: string,
  client: ClientWriter,
  send: (data: Buffer) => boolean,
  guard: CallGuard,
  o: StdioGatewayOptions,
  own: OwnRequests | undefined,
): Promise<void> {
  let described;
  let a;
  try {
    // Under a pin the live definitions are known before the call is judged (fail closed).
    if (own) await o.session.ensureListed((params) => own.ask(params, send), PIN_LIST_TIMEOUT_MS).catch((err: unknown) => o.logger.warn({ err: (err as Error).message }, 'the live tool definitions could not be listed'));
    described = o.session.describe(call, exactOf(text));
    a = await guard(described, o.session.announced);
  } catch (err) {
    // A guard that breaks must not swallow the call: it is let through, and said.
    o.logger.error({ err: (err as Error).message }, 'the call guard failed; the call is let through');
    a = { ok: true as const, callId: undefined };
  }
  if (!a.ok) {
    o.logger.warn({ tool: (call.params as { name?: unknown } | undefined)?.name, reason: a.reason }, a.message);
    client.inject(JSON.stringify(refusalResponse(call.id, a)));
    return;
  }
  // Tracked only when it reaches the server: a call the server never saw is no call.
  if (send(Buffer.concat([line, NEWLINE])) && described) o.session.track(call, described, a.callId);
}

