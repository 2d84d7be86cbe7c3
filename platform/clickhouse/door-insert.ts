/**
 * How the door inserts: one insert per call, made idempotent by a deduplication token built
 * from the rows' keys, sent the way each kind of connection takes it.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Sender } from './door-send.ts';
import type { Lane } from './gate.ts';

/**
 * The one deduplication-token rule: the table and the sorted keys of the rows. A retried insert
 * of the same rows — in whatever order — is skipped by ClickHouse inside its dedup window; key
 * look-ups (ingest) and anti-joins (analyzers) cover what lies beyond it.
 */
export function dedupToken(table: string, keys: readonly string[]): string {
  // One update of the joined text: the same bytes as one update per key, a fraction of the calls.
  return createHash('sha256').update(`${table}\n${[...keys].sort().join('\n')}`).digest('hex');
}

// Every insert also reaches the materialized views of its table (task_rows, orphan_outputs): a
// retry after a view failed must still write the view's missing rows, so each dependent table
// deduplicates on its own.
const INSERT_SETTINGS = { deduplicate_blocks_in_dependent_materialized_views: 1, date_time_input_format: 'best_effort' } as const;

/** One insert of rows (JSON objects) or lines (a TabSeparated body of `columns`) into `database`.`name`. */
export interface InsertOf {
  database: string;
  name: string;
  body: Buffer | object[];
  format: 'TabSeparated' | 'JSONEachRow';
  keys: readonly string[];
  columns?: readonly string[] | undefined;
}

/** Sends one insert in its turn on `lane`. */
export async function insertInto(sender: Sender, lane: Lane, i: InsertOf): Promise<void> {
  const settings = { ...INSERT_SETTINGS, insert_deduplication_token: dedupToken(i.name, i.keys) };
  const table = `${i.database}.${i.name}`;
  const { body, format, columns } = i;
  await sender.turn(lane, (c) => {
    if (c.rawInsert) {
      // chDB: the body as a Buffer (the client's generic insert converts it twice) and the
      // settings in the INSERT itself (as clickhouse_settings they would stay set for every
      // later statement of the connection: a later INSERT … SELECT would be dropped as a duplicate).
      const values = Buffer.isBuffer(body) ? body : Buffer.from(body.map((v) => JSON.stringify(v)).join('\n'));
      return c.rawInsert({ table, values, format, settings, ...(columns ? { columns } : {}) });
    }
    const values = Buffer.isBuffer(body) ? Readable.from([body], { objectMode: false }) : body;
    return c.ch.insert({ table, values, format, ...(columns ? { columns: columns as [string, ...string[]] } : {}), clickhouse_settings: { ...sender.withLane(c, lane), ...settings } });
  });
}
