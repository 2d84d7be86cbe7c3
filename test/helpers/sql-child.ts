/**
 * What someone with SQL access to the database can do, and nothing more: runs the statements of
 * the JSON file given (an array of {sql, params?, select?}) on the tool-audit database of
 * TOOL_AUDIT_DATA_DIR (or CLICKHOUSE_URL), and prints the selects' rows as one JSON array. The
 * audit log's attack tests play the attacker with it, after serve has exited (one process per
 * data directory).
 */
import { readFileSync } from 'node:fs';
import { configOrExit } from '../../cli/runtime.ts';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';

const statements = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as Array<{ sql: string; params?: Record<string, unknown>; select?: boolean }>;
const config = configOrExit();
const door = createClickHouseDoor(await createClickHouse(config.clickhouse), config.clickhouse.database);
const out: unknown[] = [];
for (const s of statements) out.push(s.select ? await door.select(s.sql, s.params ?? {}) : (await door.command(s.sql, s.params ?? {}), null));
await door.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
