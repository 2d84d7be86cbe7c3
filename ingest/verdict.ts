/**
 * The verdict on a commit round, apart from any I/O (I1 of SPEC §3): each packet of the round is
 * new (to write), a duplicate (identical to a stored or remembered packet, or to a packet written
 * earlier in the round: skipped), or rejected (the decoder refused it, or it reuses a key with
 * other content). Packets are judged in arrival order, exactly as if each had been committed on
 * its own, one after another.
 */
import type { RejectCode } from './rows.ts';

/** The kinds of stored packets. */
export type Kind = 'invocation' | 'output' | 'dependency' | 'hint' | 'turn' | 'run';

/** Every kind, in insert order. */
export const KINDS: readonly Kind[] = ['invocation', 'output', 'dependency', 'hint', 'turn', 'run'];

/** What the verdict needs of the round's packets, by index in arrival order. */
export interface RoundPackets {
  readonly size: number;
  /** The packet's kind; undefined when the decoder rejected it. */
  kindOf(i: number): Kind | undefined;
  /** Its key: call_id, output_id, `preceding>succeeding` of a dependency, hint_id, turn_id or run_id. */
  key(i: number): string;
  /** Fingerprint of its content: two packets are the same packet when kind, key and fingerprint agree. */
  fp(i: number): string;
}

/** A rejected packet; `conflict` is set for an I1 reuse, absent for a packet the decoder refused. */
export interface Rejected {
  i: number;
  conflict?: { kind: Kind; key: string };
}

/** The verdict on a round (built by {@link judgeRound}, completed by {@link judgeStored}). */
export interface RoundVerdict {
  /** Key → index of the packet to write, per kind: the round's first packet of each new key. */
  fresh: Record<Kind, Map<string, number>>;
  /** Packets identical to a packet already stored: skipped. */
  duplicates: Set<number>;
  /** Rejected packets in the order they were judged. */
  rejected: Rejected[];
  /** How many of `rejected` were judged before ClickHouse was asked (the rest after it). */
  judgedFirst: number;
  /**
   * Later packets of the round under the key of an earlier fresh one (`first`). After
   * {@link judgeStored}: only the copies of a packet that is written (they share its outcome).
   */
  followers: Array<{ i: number; first: number }>;
}

/**
 * First pass, before asking ClickHouse: decoder rejections, and what the writer remembers having
 * written (`known(kind, key, fp)`: the fingerprint stored under the key, if remembered). The
 * first packet of every other key is fresh until {@link judgeStored}; later packets of that key
 * in the round follow it (their fate depends on whether it turns out stored).
 */
export function judgeRound(p: RoundPackets, known: (kind: Kind, key: string, fp: string) => string | undefined): RoundVerdict {
  const v: RoundVerdict = {
    fresh: { invocation: new Map(), output: new Map(), dependency: new Map(), hint: new Map(), turn: new Map(), run: new Map() },
    duplicates: new Set(),
    rejected: [],
    judgedFirst: 0,
    followers: [],
  };
  for (let i = 0; i < p.size; i++) {
    const kind = p.kindOf(i);
    if (kind === undefined) {
      v.rejected.push({ i });
      continue;
    }
    const key = p.key(i);
    const first = v.fresh[kind].get(key);
    if (first !== undefined) {
      v.followers.push({ i, first });
      continue;
    }
    const fp = p.fp(i);
    const remembered = known(kind, key, fp);
    if (remembered === undefined) v.fresh[kind].set(key, i);
    else if (remembered === fp) v.duplicates.add(i);
    else v.rejected.push({ i, conflict: { kind, key } });
  }
  v.judgedFirst = v.rejected.length;
  return v;
}

/**
 * Second pass, with what ClickHouse holds (`stored[kind]`: key → fingerprint, for the fresh
 * keys), exactly as if the round's packets had been committed one at a time: a fresh packet
 * whose key is stored is a duplicate or a conflict and is not written; a follower is judged
 * against the stored packet then, else against its written first (a copy or a conflict).
 */
export function judgeStored(v: RoundVerdict, p: RoundPackets, stored: Record<Kind, ReadonlyMap<string, string>>): void {
  const storedFp = new Map<number, string>();
  for (const kind of KINDS) {
    for (const [key, i] of v.fresh[kind]) {
      const s = stored[kind].get(key);
      if (s === undefined) continue;
      storedFp.set(i, s);
      if (s === p.fp(i)) v.duplicates.add(i);
      else v.rejected.push({ i, conflict: { kind, key } });
      v.fresh[kind].delete(key);
    }
  }
  const copies: RoundVerdict['followers'] = [];
  for (const f of v.followers) {
    const kind = p.kindOf(f.i) as Kind;
    const against = storedFp.get(f.first) ?? p.fp(f.first);
    if (against !== p.fp(f.i)) v.rejected.push({ i: f.i, conflict: { kind, key: p.key(f.i) } });
    else if (storedFp.has(f.first)) v.duplicates.add(f.i);
    else copies.push(f);
  }
  v.followers = copies;
}

/** The I1 reason of a conflict, as answered and quarantined. */
export function conflictReason(kind: Kind, key: string): { code: Extract<RejectCode, `I1_${string}`>; message: string } {
  const code = CONFLICT[kind];
  const what = kind === 'invocation' ? 'call_id' : kind === 'output' ? 'output_id' : kind === 'hint' ? 'hint_id' : kind === 'turn' ? 'turn_id' : kind === 'run' ? 'run_id' : 'dependency pair';
  return { code, message: `a different packet with this ${what} (${key}) already exists (I1)` };
}

const CONFLICT: Record<Kind, Extract<RejectCode, `I1_${string}`>> = {
  invocation: 'I1_call_id_reused',
  output: 'I1_output_id_reused',
  dependency: 'I1_dependency_reused',
  hint: 'I1_hint_id_reused',
  turn: 'I1_turn_id_reused',
  run: 'I1_run_id_reused',
};
