/**
 * What every packet decoder shares (decode-packet.ts, decode-records.ts): the rejection value, the
 * fingerprint that makes two packets the same packet for I1, and created_at as ClickHouse text.
 * Pure.
 */
import { compareCodePoints, pythonJsonDumps, pythonJsonString, type JsonValue } from '../schemas/canonical-json.ts';
import { timestampMs } from '../schemas/common.ts';
import { sha256Hex } from '../schemas/hashing.ts';
import type { PacketType } from '../schemas/packets.ts';
import { chTime } from '../platform/clickhouse/statement.ts';
import { storedFingerprint } from './ports.ts';
import type { Accepted, DecodeResult, RejectCode } from './rows.ts';

/** A packet refused by a rule: its code, the reason, and the ids it is known by. */
export const reject = (code: RejectCode, message: string, packetType: PacketType | null, ids: string[] = []): DecodeResult => ({
  ok: false,
  error: { code, message, packetType, ids },
});

/**
 * What makes two packets "the same packet" for I1: every normalized field, not the transport
 * (source) — a redelivery from another offset or request is still the same packet. The text
 * hashed is `json.dumps(fields, sort_keys=True)`; a kind's rows always have the same fields, so
 * their sorted order and written keys are computed once per kind. An invocation's empty approval
 * is left out, so that calls without one keep the fingerprint they had before approvals existed.
 */
export function fingerprint(kind: Accepted['kind'], row: { fingerprint: string; source: string; approval?: string; messages?: string }): string {
  const fields = row as unknown as Record<string, JsonValue>;
  // A turn's messages are a field only when it has some: a turn without is the same turn as before they existed.
  // (The key is the kind itself for nearly every packet: nothing is built per packet for it.)
  const key = row.approval ? `${kind}+approval` : row.messages === undefined ? kind : `${kind}+messages`;
  let keys = FIELD_ORDER.get(key);
  const count = Object.keys(fields).length;
  if (keys === undefined || keys.count !== count) {
    // Redactions are left out: they are read off the stored values (the placeholders), not sent.
    const names = Object.keys(fields)
      .filter((k) => k !== 'fingerprint' && k !== 'source' && k !== 'redactions' && !(k === 'approval' && !row.approval))
      .sort(compareCodePoints);
    keys = { count, names, written: names.map((k, i) => `${i > 0 ? ', ' : ''}${pythonJsonString(k)}: `) };
    FIELD_ORDER.set(key, keys);
  }
  let text = '{';
  for (let i = 0; i < keys.names.length; i++) {
    text += (keys.written[i] as string) + pythonJsonDumps(fields[keys.names[i] as string] as JsonValue, { sortKeys: true });
  }
  return storedFingerprint(sha256Hex(`${text}}`));
}

const FIELD_ORDER = new Map<string, { count: number; names: string[]; written: string[] }>();

/**
 * created_at as ClickHouse DateTime64(3) text in UTC. A timestamp already written as UTC with
 * milliseconds (what JavaScript's toISOString and most emitters send) is rearranged as is; any
 * other accepted form goes through Date.
 */
export function chCreatedAt(ts: string): string {
  if (ts.length === 24 && ts.charCodeAt(23) === 0x5a /* Z */ && ts.charCodeAt(19) === 0x2e /* . */) return `${ts.slice(0, 10)} ${ts.slice(11, 23)}`;
  return chTime(timestampMs(ts));
}
