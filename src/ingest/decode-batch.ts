/**
 * The decode stage of the segment writer, shared by the main thread and decode threads: packets
 * are decoded and checked (decode-packet.ts) and each accepted row is serialized once, as a
 * TabSeparated line, into per-segment line buffers. What the commit stage needs of an accepted
 * packet is small: its key, fingerprint, ids and where its line is.
 */
import { decodeText } from './decode-packet.ts';
import { acceptedIds, contentLine, LineBuffer, rowLine, type Accepted, type Rejection } from './rows.ts';

/** A segment (or `content` for output_contents) whose lines a buffer holds. */
export type LineKind = Accepted['kind'] | 'content';

/** Line buffers of one batch, per segment (created when first needed). */
export type BatchBuffers = Partial<Record<LineKind, LineBuffer>>;

/** An accepted packet after the decode stage: its row is already a line in its batch's buffer. */
export interface Entry {
  kind: Accepted['kind'];
  key: string;
  fp: string;
  ids: string[];
  /** Byte range of the row's line in the batch buffer of its kind. */
  start: number;
  end: number;
  /** Outputs: the content, as a line of its own in the batch's `content` buffer. */
  content?: { hash: string; lastSeen: string; start: number; end: number };
  /** Dependencies: what their look-up needs. */
  taskId?: string;
  pre?: string;
}

/** What one packet became: an entry, or the rejection that sends it to quarantine. */
export type Item = Entry | Rejection;

export const isEntry = (e: Item): e is Entry => 'kind' in e;

/**
 * Decodes packet i of [from, to) given as (raw text, declared bytes, source key) into items[i],
 * appending accepted rows' lines to buffers.
 */
export function decodeItems(
  packet: (i: number) => { raw: string; bytes: number | undefined; source: string },
  from: number,
  to: number,
  items: Item[],
  buffers: BatchBuffers,
  maxPacketBytes: number,
): void {
  const buffer = (k: LineKind) => (buffers[k] ??= new LineBuffer());
  for (let i = from; i < to; i++) {
    const p = packet(i);
    const r = decodeText(p.raw, p.bytes, p.source, maxPacketBytes);
    if (!r.ok) {
      items[i] = r.error;
      continue;
    }
    const a = r.value;
    const lines = buffer(a.kind);
    const start = lines.push(rowLine(a));
    const e: Entry = { kind: a.kind, key: a.key, fp: a.row.fingerprint, ids: acceptedIds(a), start, end: lines.length };
    if (a.kind === 'output') {
      const c = buffer('content');
      const cStart = c.push(contentLine(a.content));
      e.content = { hash: a.content.content_hash, lastSeen: a.content.last_seen, start: cStart, end: c.length };
    } else if (a.kind === 'dependency') {
      e.taskId = a.row.task_id;
      e.pre = a.row.preceding_call_id;
    }
    items[i] = e;
  }
}
