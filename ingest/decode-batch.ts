/**
 * The decode stage of the segment writer, shared by the main thread and decode threads: packets
 * are decoded and checked (decode-packet.ts) and each accepted row is serialized once, as a
 * TabSeparated line, into per-segment line buffers. What the commit stage needs of an accepted
 * packet (key, fingerprint, where its line is, a few ids) is kept in columns — typed arrays and
 * one string per batch — rather than in objects: a batch waits for its commit round on the heap
 * of the main thread, and thousands of small objects there cost the garbage collector dearly.
 */
import type { Redactor } from '../schemas/redaction-policy.ts';
import { decodeText } from './decode-packet.ts';
import type { RawEncoding } from './ports.ts';
import { type Accepted, type Rejection } from './rows.ts';
import { contentLine, LineBuffer, rowLine } from './row-lines.ts';

/** A segment (or `content` for output_contents) whose lines a buffer holds. */
export type LineKind = Accepted['kind'] | 'content';

/** Line buffers of one batch, per segment (created when first needed). */
export type BatchBuffers = Partial<Record<LineKind, LineBuffer>>;

/** Kind codes of {@link Columns.kind}. */
export const REJECTED = 0;
export const KIND_CODE: Record<Accepted['kind'], number> = { invocation: 1, output: 2, dependency: 3, hint: 4, turn: 5, run: 6 };
export const CODE_KIND: ReadonlyArray<Accepted['kind'] | undefined> = [undefined, 'invocation', 'output', 'dependency', 'hint', 'turn', 'run'];

/** Widths of the fixed fields in {@link Columns.text}. */
const UUID = 36;
const FP = 32;
const HASH = 64;
const TS = 23;

/**
 * A decoded batch. For packet i, text[textAt[i], textAt[i+1]) holds: its key (a UUID; a
 * dependency: `preceding>succeeding`; a hint, a turn or a run: its id), its fingerprint (32), then for an
 * output its call_id, content hash and last_seen, for an invocation or a dependency its task_id.
 */
export interface Columns {
  kind: Uint8Array;
  /** Row line [start, end) in the batch buffer of its kind. */
  start: Int32Array;
  end: Int32Array;
  /** Outputs: content line [start, end) in the `content` buffer. */
  cStart: Int32Array;
  cEnd: Int32Array;
  textAt: Int32Array;
  text: string;
  /** Packets rejected at decode, by index. */
  rejections: Array<[number, Rejection]>;
}

/** Builds {@link Columns} packet by packet (in order). */
export class ColumnsBuilder {
  readonly kind: Uint8Array;
  readonly start: Int32Array;
  readonly end: Int32Array;
  readonly cStart: Int32Array;
  readonly cEnd: Int32Array;
  readonly textAt: Int32Array;
  private readonly parts: string[] = [];
  private length = 0;
  readonly rejections: Array<[number, Rejection]> = [];

  /** `redactor`: the deployment's redaction (decode-packet.ts takes secrets out before a row is built). */
  constructor(
    readonly n: number,
    private readonly redactor?: Redactor,
  ) {
    this.kind = new Uint8Array(n);
    this.start = new Int32Array(n);
    this.end = new Int32Array(n);
    this.cStart = new Int32Array(n);
    this.cEnd = new Int32Array(n);
    this.textAt = new Int32Array(n + 1);
  }

  private add(s: string): void {
    this.parts.push(s);
    this.length += s.length;
  }

  /** Decodes packet i (given as raw text, declared bytes, source key and encoding) into the columns and buffers. */
  decode(i: number, raw: string, bytes: number | undefined, source: string, maxPacketBytes: number, buffers: BatchBuffers, encoding: RawEncoding = 'utf8'): void {
    this.textAt[i] = this.length;
    const r = decodeText(raw, bytes, source, maxPacketBytes, encoding, this.redactor);
    if (!r.ok) {
      this.rejections.push([i, r.error]);
      this.textAt[i + 1] = this.length;
      return;
    }
    const a = r.value;
    const lines = (buffers[a.kind] ??= new LineBuffer());
    this.kind[i] = KIND_CODE[a.kind];
    this.start[i] = lines.push(rowLine(a));
    this.end[i] = lines.length;
    this.add(a.key);
    this.add(a.row.fingerprint);
    if (a.kind === 'output') {
      const c = (buffers.content ??= new LineBuffer());
      this.cStart[i] = c.push(contentLine(a.content));
      this.cEnd[i] = c.length;
      this.add(a.row.call_id);
      this.add(a.content.content_hash);
      this.add(a.content.last_seen);
    } else if (a.kind === 'invocation' || a.kind === 'dependency') {
      // The task of a call stamps its outputs (segment-writer); a dependency's finds its rows.
      this.add(a.row.task_id);
    }
    this.textAt[i + 1] = this.length;
  }

  /** The columns (call once, after every packet). */
  finish(): Columns {
    const { kind, start, end, cStart, cEnd, textAt, rejections } = this;
    return { kind, start, end, cStart, cEnd, textAt, text: this.parts.join(''), rejections };
  }
}

/** Reads a decoded batch's columns. */
export class ColumnsReader {
  private readonly rejected = new Map<number, Rejection>();

  constructor(readonly c: Columns) {
    for (const [i, r] of c.rejections) this.rejected.set(i, r);
  }

  kindOf(i: number): Accepted['kind'] | undefined {
    return CODE_KIND[this.c.kind[i] as number];
  }

  rejection(i: number): Rejection | undefined {
    return this.rejected.get(i);
  }

  private keyLength(i: number): number {
    return this.c.kind[i] === KIND_CODE.dependency ? 2 * UUID + 1 : UUID;
  }

  key(i: number): string {
    const at = this.c.textAt[i] as number;
    return this.c.text.slice(at, at + this.keyLength(i));
  }

  fp(i: number): string {
    const at = (this.c.textAt[i] as number) + this.keyLength(i);
    return this.c.text.slice(at, at + FP);
  }

  /** The ids an accepted packet is known by (as acceptedIds of rows.ts). */
  ids(i: number): string[] {
    const key = this.key(i);
    if (this.c.kind[i] === KIND_CODE.output) return [key, this.callId(i)];
    if (this.c.kind[i] === KIND_CODE.dependency) return [key.slice(0, UUID), key.slice(UUID + 1)];
    return [key];
  }

  /** The call_id of an output. */
  callId(i: number): string {
    const at = (this.c.textAt[i] as number) + UUID + FP;
    return this.c.text.slice(at, at + UUID);
  }

  contentHash(i: number): string {
    const at = (this.c.textAt[i] as number) + 2 * UUID + FP;
    return this.c.text.slice(at, at + HASH);
  }

  lastSeen(i: number): string {
    const at = (this.c.textAt[i] as number) + 2 * UUID + FP + HASH;
    return this.c.text.slice(at, at + TS);
  }

  /** The task_id of an invocation ('' = none) or a dependency. */
  taskId(i: number): string {
    return this.c.text.slice((this.c.textAt[i] as number) + this.keyLength(i) + FP, this.c.textAt[i + 1] as number);
  }
}
