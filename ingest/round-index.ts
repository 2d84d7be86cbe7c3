/**
 * A commit round's packets under one index space (round-commit.ts): packet i of the round is
 * packet local[i] of batch owner[i], with the columns and line buffers its batch was decoded to.
 */
import type { ColumnsReader, BatchBuffers } from './decode-batch.ts';
import type { BodyPart } from './line-join.ts';
import type { RawPacket } from './ports.ts';
import { sourceKey } from './rows.ts';
import { type LineBuffer } from './row-lines.ts';
import type { Kind, RoundPackets } from './verdict.ts';

/** A decoded batch as a round sees it. */
export interface RoundBatch {
  batch: RawPacket[];
  reader: ColumnsReader;
  buffers: BatchBuffers;
}

/** The round's packets under one index space, in arrival order: packet i is packet local[i] of batch owner[i]. */
export class RoundIndex implements RoundPackets {
  readonly size: number;
  private readonly owner: Int32Array;
  private readonly local: Int32Array;

  constructor(readonly round: readonly RoundBatch[]) {
    this.size = round.reduce((n, d) => n + d.batch.length, 0);
    this.owner = new Int32Array(this.size);
    this.local = new Int32Array(this.size);
    let i = 0;
    round.forEach((d, b) => {
      for (let k = 0; k < d.batch.length; k++, i++) {
        this.owner[i] = b;
        this.local[i] = k;
      }
    });
  }

  private d(i: number): RoundBatch {
    return this.round[this.owner[i] as number] as RoundBatch;
  }
  col(i: number): ColumnsReader {
    return this.d(i).reader;
  }
  at(i: number): number {
    return this.local[i] as number;
  }
  packet(i: number): RawPacket {
    return this.d(i).batch[this.at(i)] as RawPacket;
  }
  kindOf(i: number): Kind | undefined {
    return this.col(i).kindOf(this.at(i));
  }
  key(i: number): string {
    return this.col(i).key(this.at(i));
  }
  fp(i: number): string {
    return this.col(i).fp(this.at(i));
  }
  ids(i: number): string[] {
    return this.col(i).ids(this.at(i));
  }
  /** The packet's TabSeparated line in its batch's buffer (its content line for 'content'). */
  part(i: number, kind: Kind | 'content'): BodyPart {
    const c = this.col(i).c;
    const k = this.at(i);
    const lines = this.d(i).buffers[kind] as LineBuffer;
    return kind === 'content' ? { lines, start: c.cStart[k] as number, end: c.cEnd[k] as number } : { lines, start: c.start[k] as number, end: c.end[k] as number };
  }
}

/** Source keys of the listed packets that came from Kafka. */
export const kafkaKeys = (r: RoundIndex, list: ReadonlyArray<{ i: number }>) =>
  list.filter(({ i }) => r.packet(i).source.kind === 'kafka').map(({ i }) => sourceKey(r.packet(i).source));
