/**
 * Fills a data directory with N stored calls inside ClickHouse (INSERT … SELECT FROM numbers(),
 * no rows through JavaScript), in a process of its own: embedded ClickHouse admits one data
 * directory per process. argv: data directory, database, N. Prints N and the call_id of the
 * first call. Used by the start-up tests.
 */
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';

const [dataDir = '', database = 'tool_audit', n = '0'] = process.argv.slice(2);
const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database, dataDir });
const door = createClickHouseDoor(ch, database);
await migrate(door, { retentionDays: { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 } });
await door.command(
  `INSERT INTO {db:Identifier}.tool_invocations
     (call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, status, duration_ms, result_summary, created_at, fingerprint, source, ingested_at)
   SELECT reinterpretAsUUID(sipHash128('fill', number)), concat('task-', toString(intDiv(number, 20))), 'search_web', 'L', 'gateway', 'gateway-0',
          '{}', 'success', 100, '{}', now64(3) - toIntervalSecond(7200) + toIntervalMillisecond(number % 3600000),
          substring(hex(sipHash128('fp', number)), 1, 32), concat('fill@', toString(number)), now64(3) - toIntervalSecond(3600)
   FROM numbers({n:UInt64})`,
  { n: Number(n) },
);
const [row] = await door.select<{ c: string; first: string }>("SELECT count() AS c, toString(reinterpretAsUUID(sipHash128('fill', toUInt64(0)))) AS first FROM {db:Identifier}.tool_invocations");
// The count, then the call_id of the first call (a key a test can send again).
process.stdout.write(`${row?.c ?? 0}\n${row?.first ?? ''}\n`);
await door.close();
