/**
 * Prints every value of every String-like column of every table of the tool-audit database in
 * TOOL_AUDIT_DATA_DIR, one JSON document: {"<table>.<column>": [values…]} — what a reader of the
 * store could see. For the secrets-never-stored test, run after serve has exited (one process per
 * data directory).
 */
import { configOrExit } from '../../cli/runtime.ts';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';

const config = configOrExit();
const door = createClickHouseDoor(await createClickHouse(config.clickhouse), config.clickhouse.database);
const columns = await door.select<{ table: string; name: string }>(
  `SELECT table, name FROM system.columns
   WHERE database = {db:String} AND (type LIKE '%String%' OR type LIKE '%JSON%') AND default_kind NOT IN ('ALIAS', 'EPHEMERAL')
     AND table IN (SELECT name FROM system.tables WHERE database = {db:String} AND engine NOT IN ('MaterializedView', 'View'))`,
);
const out: Record<string, string[]> = {};
for (const c of columns) {
  const rows = await door.select<{ v: string }>('SELECT ifNull(toString({c:Identifier}), \'\') AS v FROM {db:Identifier}.{t:Identifier}', { c: c.name, t: c.table });
  out[`${c.table}.${c.name}`] = rows.map((r) => r.v);
}
await door.close();
// Exit once the pipe took it all: a large document written to a pipe is flushed asynchronously.
process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
