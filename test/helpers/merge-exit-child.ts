/**
 * A process that writes, merges and exits, for the part-cleanup test: it opens the
 * data directory of TOOL_AUDIT_DATA_DIR as the commands do (`openClickHouse` of cli/runtime.ts,
 * whose close() removes replaced parts first) — or, with argv `bare`, with a plain door whose
 * close() only closes — migrates, inserts calls in several parts, merges them (OPTIMIZE … FINAL)
 * and closes. With argv `inspect` it only opens the directory and prints the paths of its active
 * parts as ClickHouse loads them (parts another part covers are outdated, not active).
 */
import { configOrExit, openClickHouse } from '../../cli/runtime.ts';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';

const mode = process.argv[2];
const config = configOrExit();
const door = mode === 'write' ? await openClickHouse(config) : createClickHouseDoor(await createClickHouse(config.clickhouse), config.clickhouse.database);
if (mode === 'inspect') {
  const active = await door.select<{ path: string }>('SELECT path FROM system.parts WHERE database = {db:String} AND active');
  await door.close();
  process.stdout.write(`${JSON.stringify(active.map((p) => p.path))}\n`);
  process.exit(0);
}
await migrate(door, { retentionDays: config.retentionDays });
for (let part = 0; part < 4; part++) {
  // Each INSERT is a part of tool_invocations and of the tables its views fill (call_keys, tool_durations).
  await door.command(
    `INSERT INTO {db:Identifier}.tool_invocations
       (call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, status, duration_ms, result_summary, created_at, fingerprint, source)
     SELECT reinterpretAsUUID(sipHash128('merge-exit', number)), concat('task-', toString(intDiv(number, 10))), 'search_web', 'L', 'gateway', 'gateway-0',
            '{}', 'success', 100, '{}', now64(3) - toIntervalMillisecond(number), substring(hex(sipHash128('fp', number)), 1, 32),
            concat('merge-exit@', toString(number))
     FROM numbers({from:UInt64}, 1000)`,
    { from: part * 1000 },
  );
}
for (const t of ['tool_invocations', 'call_keys', 'tool_durations']) await door.command('OPTIMIZE TABLE {db:Identifier}.{t:Identifier} FINAL', { t });
await door.close();
