/**
 * How the door exports: a SELECT's answer in a file format, yielded as bytes as they come. A
 * server streams it; embedded ClickHouse writes it to a scratch file that is read as it grows.
 */
import { AppError } from '../errors.ts';
import type { DoorParts, Sender } from './door-send.ts';
import { clickhouseError, statementName } from './error-map.ts';
import { tailWrittenFile, type ExportFormatName } from './export-stream.ts';
import type { Lane } from './gate.ts';
import { renderStatement } from './literals.ts';

/** One export: the statement, its values, the format and the statement's own settings. */
export interface ExportOf {
  sql: string;
  params: Record<string, unknown>;
  format: ExportFormatName;
  settings: Record<string, string | number>;
}

/** The bytes of an export, run in its turn on `lane`. */
export function exportRows(parts: DoorParts, sender: Sender, lane: Lane, e: ExportOf): AsyncIterable<Buffer> {
  const name = statementName(e.sql);
  if (!parts.conns.embedded) {
    return (async function* () {
      const { prepared, sized } = sender.prepare(`${e.sql}\nFORMAT ${e.format}`, e.params);
      let stream: AsyncIterable<Buffer>;
      try {
        ({ stream } = await sender.turn(lane, (c) => c.ch.exec({ ...prepared, clickhouse_settings: { ...sender.withLane(c, lane), ...sized, ...e.settings } })));
      } catch (err) {
        throw clickhouseError(err, name);
      }
      yield* stream;
    })();
  }
  // Settings in the statement (as clickhouse_settings they would stay set for the session).
  const keys = Object.keys(e.settings);
  if (keys.some((k) => !/^[a-z0-9_]+$/.test(k))) throw new AppError('CLICKHOUSE_QUERY_FAILED', `not a setting name among ${keys.join(', ')}`, { retryable: false });
  const values = Object.fromEntries(keys.map((k, i) => [`export_setting_${i}`, String(e.settings[k])]));
  const clause = keys.map((k, i) => `${k} = {export_setting_${i}:String}`).join(', ');
  const extension = e.format === 'Parquet' ? 'parquet' : e.format === 'CSVWithNames' ? 'csv' : 'ndjson';
  return tailWrittenFile(parts.scratchDir, extension, async (path) => {
    // Rendered even on a door that binds: a table function's arguments and a SETTINGS clause
    // take literals, not query parameters.
    const query = renderStatement(`INSERT INTO FUNCTION file({export_path:String}, {export_format:String}) ${clause ? `SETTINGS ${clause} ` : ''}${e.sql}`, {
      db: parts.database,
      ...e.params,
      ...values,
      export_path: path,
      export_format: e.format,
    });
    try {
      await sender.turn(lane, (c) => c.ch.command({ query }));
    } catch (err) {
      throw clickhouseError(err, name);
    }
  });
}
