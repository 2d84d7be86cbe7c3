/**
 * What `tool-audit verify` checks beside the leaves: stored rows the log cannot cover. A row dated
 * after now is never sequenced (the builder takes rows up to now minus its grace), so an insert
 * dated ahead would stay out of every head; an output's content is stored once per hash, outside
 * its leaf (which covers the hash), so a version inserted under that hash is found by hashing it.
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { chTime } from '../../platform/clickhouse/statement.ts';
import { LEAF_KINDS, leafSelect, storedColumn } from './leaf-sql.ts';
import type { Finding } from './finding.ts';

/** Rows of each kind dated after `afterMs`: never sequenced, never covered by a head. */
export async function futureRows(ch: ClickHouseDoor, afterMs: number, add: (f: Finding) => void): Promise<void> {
  for (const kind of LEAF_KINDS) {
    const stored = storedColumn(kind);
    const rows = await ch.select<{ key: string; part: string; t: string }>(
      `SELECT record_key AS key, part, toString(stored_at) AS t FROM (${leafSelect(kind, `${stored} > {after:DateTime64(3)}`)}) LIMIT 10000`,
      { after: chTime(afterMs) },
    );
    for (const r of rows) add({ what: 'future', kind, key: r.key, part: r.part, detail: `${kind} ${r.key} in part ${r.part} is dated ${r.t}, after now: no head can cover it` });
  }
}

/** Output contents that do not hash to their content_hash: inserted or changed afterwards. */
export async function forgedContents(ch: ClickHouseDoor, add: (f: Finding) => void): Promise<void> {
  const rows = await ch.select<{ h: string; part: string; got: string }>(
    'SELECT toString(content_hash) AS h, _part AS part, lower(hex(SHA256(content))) AS got FROM {db:Identifier}.output_contents WHERE got != content_hash LIMIT 10000',
  );
  for (const r of rows) add({ what: 'content', key: r.h, part: r.part, detail: `a content stored under hash ${r.h} in part ${r.part} hashes to ${r.got}: it was inserted or changed afterwards (never served as the output's)` });
}
