/**
 * The auditor's output part: M8, each output of a tool whose manifest version in force at the
 * output's created_at declares an `output_schema` is checked against it, with a watermark of its
 * own over tool_outputs' ingested_at (outputs arrive apart from their calls). Like the call rules,
 * the watermark does not move while no manifest is loaded, so a first manifest checks every
 * output already stored. Thin I/O around the pure {@link outputRule}.
 */
import { forEachSliced } from '../platform/cooperative.ts';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Violation } from './audit-rules.ts';
import { outputRule, ValidatorCache, type AuditOutput } from './manifest-rules.ts';
import type { ManifestHistory } from './manifest-versions.ts';
import { readWatermark, stepEnd, writeWatermark } from './store.ts';

/** Watermark name of M8. */
export const OUTPUT_AUDIT_JOB = 'auditor-outputs';
/** Outputs per step (their ids are read from tool_outputs' projection in ingest order). */
const STEP_ROWS = 20_000;
const MAX_SPAN_MS = 86_400_000;
/**
 * Content bytes held at once: contents are read a chunk of distinct hashes at a time, each chunk
 * at most this many bytes by the outputs' size_bytes (one output larger than it is read alone).
 */
const CONTENT_CHUNK_BYTES = 32 * 1024 * 1024;

const SLICE = `ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`;

interface Meta {
  output_id: string;
  call_id: string;
  tool_id: string;
  t: string | number;
  content_hash: string;
  content_type: string;
  size_bytes: string | number;
}

/** M8 across auditor cycles: compiled validators kept between steps. */
export class OutputAuditor {
  private readonly validators = new ValidatorCache();

  constructor(private readonly ch: ClickHouseDoor) {}

  /** Checks the outputs ingested up to `to`, recording each step's findings before its watermark moves. */
  async run(history: ManifestHistory, to: number, record: (found: Violation[]) => Promise<number>): Promise<{ outputs: number; found: number; recorded: number }> {
    const total = { outputs: 0, found: 0, recorded: 0 };
    if (!history.loaded) return total;
    const tools = history.toolsWhere((e) => e.output_schema !== null);
    for (;;) {
      const from = await readWatermark(this.ch, OUTPUT_AUDIT_JOB);
      if (to <= from) return total;
      // No version declares an output schema: nothing to judge, the watermark goes to `to` at once
      // (as the call rules' does once a manifest is loaded, whichever rules it gives).
      const step = tools.length === 0 ? to : await stepEnd(this.ch, ['tool_outputs'], from, to, STEP_ROWS, MAX_SPAN_MS);
      if (tools.length > 0) {
        const r = await this.audit(history, tools, from, step);
        total.outputs += r.outputs;
        total.found += r.found.length;
        total.recorded += await record(r.found);
      }
      await writeWatermark(this.ch, OUTPUT_AUDIT_JOB, step);
      if (step >= to) return total;
    }
  }

  /** M8 on the outputs ingested in (from, to] of the given tools. */
  async audit(history: ManifestHistory, tools: string[], from: number, to: number): Promise<{ outputs: number; found: Violation[] }> {
    // The step's ids from the projection in ingest order, then their metadata by tool (the
    // table's key prefix) and output_id (its bloom filter): no column of the table is read whole.
    const ids = await this.ch.selectFields(`SELECT toString(output_id) FROM {db:Identifier}.tool_outputs WHERE ${SLICE}`, { from, to });
    if (ids.length === 0) return { outputs: 0, found: [] };
    const metas = await this.ch.select<Meta>(
      `SELECT toString(output_id) AS output_id, toString(call_id) AS call_id, tool_id, toUnixTimestamp64Milli(created_at) AS t,
              toString(content_hash) AS content_hash, toString(content_type) AS content_type, size_bytes
       FROM {db:Identifier}.tool_outputs WHERE tool_id IN {tools:Array(String)} AND output_id IN {ids:KeySet(UUID)}
       ORDER BY output_id`,
      { tools, ids: ids.map((r) => r[0] as string) },
    );
    const found: Violation[] = [];
    for (const chunk of contentChunks(metas)) {
      const contents = await this.contents(chunk.hashes);
      const outputs: AuditOutput[] = [];
      for (const m of chunk.metas) {
        const content = contents.get(m.content_hash);
        // No content (its retention ran out before the check): nothing to judge.
        if (content === undefined) continue;
        outputs.push({ output_id: m.output_id, call_id: m.call_id, tool_id: m.tool_id, t: Number(m.t), content_type: m.content_type, content });
      }
      await forEachSliced(outputs, (o) => found.push(...outputRule([o], history, this.validators)), 200);
    }
    return { outputs: metas.length, found };
  }

  /**
   * Content per hash (output_contents is ordered by content_hash: one granule per hash), only a
   * version that hashes to it: one inserted afterwards under the hash is not the output's.
   */
  private async contents(hashes: string[]): Promise<Map<string, string>> {
    const rows = await this.ch.selectFields(
      `SELECT toString(content_hash), content FROM {db:Identifier}.output_contents WHERE content_hash IN {hashes:KeySet(String)} AND lower(hex(SHA256(content))) = content_hash LIMIT 1 BY content_hash`,
      { hashes },
    );
    return new Map(rows.map(([h, c]) => [h as string, c as string]));
  }
}

/** The step's outputs grouped so that each group's distinct contents total at most CONTENT_CHUNK_BYTES. */
function* contentChunks(metas: readonly Meta[]): Generator<{ metas: Meta[]; hashes: string[] }> {
  let chunk: Meta[] = [];
  let hashes = new Set<string>();
  let bytes = 0;
  for (const m of metas) {
    const size = Number(m.size_bytes);
    if (!hashes.has(m.content_hash) && chunk.length > 0 && bytes + size > CONTENT_CHUNK_BYTES) {
      yield { metas: chunk, hashes: [...hashes] };
      chunk = [];
      hashes = new Set();
      bytes = 0;
    }
    chunk.push(m);
    if (!hashes.has(m.content_hash)) {
      hashes.add(m.content_hash);
      bytes += size;
    }
  }
  if (chunk.length > 0) yield { metas: chunk, hashes: [...hashes] };
}
