/**
 * A process that opens its lane clients as the commands do (the configuration from its
 * environment) and prints what the engine started with: the merge threads' nice value, the grants
 * of its user, and the nice values its merge threads had (from /proc) while a merge ran. For
 * test/integration/platform/engine-args.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { configOrExit } from '../../cli/runtime.ts';
import { createLaneClients } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';

const config = configOrExit();
const door = createClickHouseDoor(await createLaneClients(config.clickhouse), config.clickhouse.database);
const [nice] = await door.select<{ v: string }>("SELECT value AS v FROM system.server_settings WHERE name = 'os_threads_nice_value_merge_mutate'");
const grants = (await door.select<Record<string, string>>('SHOW GRANTS')).map((r) => Object.values(r)[0]);
/**
 * Nice values of the MergeMutate threads at work right now (running or in disk I/O). An idle one
 * is left out: a new thread inherits its creator's nice value (a job connection's 19, say) and
 * keeps it until its first merge sets the merge value, so an idle thread says nothing of merges.
 */
const mergeThreads = (): number[] =>
  readdirSync(`/proc/${process.pid}/task`).flatMap((t) => {
    try {
      const stat = readFileSync(`/proc/${process.pid}/task/${t}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return name === 'MergeMutate' && (fields[0] === 'R' || fields[0] === 'D') ? [Number(fields[16])] : [];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
// ClickHouse sets a merge thread's nice value for the time of each merge and resets it to 0 after,
// so the threads are sampled while a merge runs.
const seen = new Set<number>();
try {
  await door.command('CREATE TABLE IF NOT EXISTS default.merge_probe (a UInt64, s String) ENGINE = MergeTree ORDER BY a');
  for (let i = 0; i < 4; i++) await door.command(`INSERT INTO default.merge_probe SELECT number, randomPrintableASCII(64) FROM numbers(${i * 1_000_000}, 1000000)`);
  const sampler = setInterval(() => mergeThreads().forEach((n) => seen.add(n)), 2);
  await door.command('OPTIMIZE TABLE default.merge_probe FINAL');
  clearInterval(sampler);
} catch (err) {
  process.stderr.write(`merge probe: ${(err as Error).message.split('\n')[0]}\n`);
}
const mergeThreadNice = [...seen].sort((a, b) => a - b);
await door.close();
process.stdout.write(`${JSON.stringify({ nice: nice?.v, grants, mergeThreadNice })}\n`);
