/**
 * What a database holds on disk: bytes per table, per projection and per column of its
 * active parts (system.parts, system.projection_parts, system.parts_columns and
 * system.projection_parts_columns), read in the child process that has the data directory open
 * (bench/history/history-db-child.ts `storage`).
 */
import type { ClickHouseClient } from '@clickhouse/client';

/** Bytes of the active parts of one table, one projection or one column. */
export interface StorageRow {
  table: string;
  /** The projection's name, '' for the table itself. */
  projection: string;
  /** The column's name (column rows only). */
  column?: string;
  rows: number;
  bytes: number;
  /** Uncompressed bytes (column rows only). */
  uncompressed?: number;
}

/** Active parts of a database: each table (its bytes include its projections), each projection, the largest columns. */
export interface StorageReport {
  activeBytes: number;
  outdatedParts: number;
  tables: StorageRow[];
  projections: StorageRow[];
  columns: StorageRow[];
}

async function all<T>(ch: ClickHouseClient, query: string, db: string): Promise<T[]> {
  const rs = await ch.query({ query, query_params: { db }, format: 'JSONEachRow' });
  return rs.json<T>();
}

type Raw = { table: string; projection?: string; column?: string; rows: string; bytes: string; uncompressed?: string };
const row = (r: Raw): StorageRow => ({
  table: r.table,
  projection: r.projection ?? '',
  ...(r.column === undefined ? {} : { column: r.column }),
  rows: Number(r.rows),
  bytes: Number(r.bytes),
  ...(r.uncompressed === undefined ? {} : { uncompressed: Number(r.uncompressed) }),
});

/** Reads the storage of `db`; `columns` = how many of the largest columns (tables and projections together). */
export async function storageReport(ch: ClickHouseClient, db: string, columns = 40): Promise<StorageReport> {
  const tables = await all<Raw>(
    ch,
    `SELECT table, toString(sum(rows)) AS rows, toString(sum(bytes_on_disk)) AS bytes FROM system.parts
     WHERE database = {db:String} AND active GROUP BY table ORDER BY sum(bytes_on_disk) DESC`,
    db,
  );
  const projections = await all<Raw>(
    ch,
    `SELECT table, name AS projection, toString(sum(rows)) AS rows, toString(sum(bytes_on_disk)) AS bytes FROM system.projection_parts
     WHERE database = {db:String} AND active GROUP BY table, name ORDER BY sum(bytes_on_disk) DESC`,
    db,
  );
  const cols = await all<Raw>(
    ch,
    `SELECT table, projection, column, toString(sum(rows)) AS rows, toString(sum(c)) AS bytes, toString(sum(u)) AS uncompressed FROM (
       SELECT table, '' AS projection, column, rows, column_data_compressed_bytes AS c, column_data_uncompressed_bytes AS u
       FROM system.parts_columns WHERE database = {db:String} AND active
       UNION ALL
       SELECT table, name, column, rows, column_data_compressed_bytes, column_data_uncompressed_bytes
       FROM system.projection_parts_columns WHERE database = {db:String} AND active)
     GROUP BY table, projection, column ORDER BY sum(c) DESC LIMIT ${Math.max(1, Math.floor(columns))}`,
    db,
  );
  const [parts] = await all<{ active_bytes: string; outdated_parts: string }>(
    ch,
    'SELECT toString(sumIf(bytes_on_disk, active)) AS active_bytes, toString(countIf(NOT active)) AS outdated_parts FROM system.parts WHERE database = {db:String}',
    db,
  );
  return { activeBytes: Number(parts?.active_bytes ?? 0), outdatedParts: Number(parts?.outdated_parts ?? 0), tables: tables.map(row), projections: projections.map(row), columns: cols.map(row) };
}

/** The report as markdown tables, in bytes per call of `calls`. */
export function storageTables(r: StorageReport, calls: number): string {
  const perCall = (b: number) => (b / calls).toFixed(1);
  const out = ['| table | rows | bytes on disk | bytes per call | of which projections |', '|---|---|---|---|---|'];
  for (const t of r.tables) {
    const proj = r.projections.filter((p) => p.table === t.table).reduce((n, p) => n + p.bytes, 0);
    out.push(`| ${t.table} | ${t.rows.toLocaleString('en')} | ${t.bytes.toLocaleString('en')} | ${perCall(t.bytes)} | ${proj ? perCall(proj) : ''} |`);
  }
  out.push(`| **all active parts** | | ${r.activeBytes.toLocaleString('en')} | **${perCall(r.activeBytes)}** | |`, '');
  out.push('| projection | rows | bytes on disk | bytes per call |', '|---|---|---|---|');
  for (const p of r.projections) out.push(`| ${p.table}.${p.projection} | ${p.rows.toLocaleString('en')} | ${p.bytes.toLocaleString('en')} | ${perCall(p.bytes)} |`);
  out.push('', '| column (table[.projection]) | compressed bytes per call | uncompressed per call | ratio |', '|---|---|---|---|');
  for (const c of r.columns) {
    const where = c.projection ? `${c.table}.${c.projection}` : c.table;
    out.push(`| ${c.column} (${where}) | ${perCall(c.bytes)} | ${perCall(c.uncompressed ?? 0)} | ${((c.uncompressed ?? 0) / Math.max(1, c.bytes)).toFixed(1)} |`);
  }
  return out.join('\n');
}
