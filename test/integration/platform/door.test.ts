import { describe, expect, it } from 'vitest';
import { clickhouseError, createClickHouseDoor, dedupToken } from '../../../platform/clickhouse/door.ts';
import { AppError } from '../../../platform/errors.ts';
import { count, freshDatabase, rows, testLaneClients } from '../../helpers/clickhouse.ts';

const TABLE = `CREATE TABLE {db:Identifier}.door_t (k String, v UInt32) ENGINE = MergeTree ORDER BY k
  SETTINGS non_replicated_deduplication_window = 100`;

describe('the ClickHouse door on a real engine', () => {
  it('maps failures once: a wrong statement is not retryable, a missing table is, a read limit is its own code', async () => {
    const { door } = await freshDatabase('door');
    const syntax = await door.select('SELEC 1').catch((e: unknown) => e);
    expect(syntax).toBeInstanceOf(AppError);
    expect(syntax).toMatchObject({ code: 'CLICKHOUSE_QUERY_FAILED', retryable: false });
    const missing = await door.select('SELECT 1 FROM {db:Identifier}.no_such_table').catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'CLICKHOUSE_UNAVAILABLE', retryable: true });
    const limited = await door
      .read({ name: 'numbers', sql: 'SELECT number FROM system.numbers LIMIT 10' }, {}, { limits: { maxExecutionSeconds: 5, maxResultRows: 3 } })
      .catch((e: unknown) => e);
    expect(limited).toMatchObject({ code: 'CLICKHOUSE_LIMIT_EXCEEDED', retryable: false });
    // An insert the engine refuses (a value that is not a UInt32): the same insert fails again. On
    // the embedded engine the error is chdb's typed insert error, ClickHouse's code in clickhouseCode.
    await door.command(TABLE);
    const refused = await door.insertRows('door_t', [{ key: 'bad', row: { k: 'a', v: 'not a number' } }]).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'CLICKHOUSE_QUERY_FAILED', retryable: false });
    // Not a ClickHouse answer at all (connection refused): worth a retry.
    expect(clickhouseError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' }), 'x')).toMatchObject({
      code: 'CLICKHOUSE_UNAVAILABLE',
      retryable: true,
    });
  });

  it('makes a retried insert of the same keys a no-op whatever their order, and leaks no token into later statements', async () => {
    const { ch, db, door } = await freshDatabase('door');
    await door.command(TABLE);
    const batch = [
      { key: 'a', row: { k: 'a', v: 1 } },
      { key: 'b', row: { k: 'b', v: 2 } },
    ];
    await door.insertRows('door_t', batch);
    await door.insertRows('door_t', [...batch].reverse());
    expect(await rows(ch, 'SELECT k, v FROM {db:Identifier}.door_t ORDER BY k', { db })).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ]);
    // Two INSERT … SELECT after the insert: each lands (on embedded ClickHouse a token set as a
    // session setting would make the second one a "duplicate" of the first).
    await door.command("INSERT INTO {db:Identifier}.door_t SELECT 'c', 3");
    await door.command("INSERT INTO {db:Identifier}.door_t SELECT 'c', 3");
    expect(await count(ch, db, 'door_t', "k = 'c'")).toBe(2);
    await door.insertLines('door_t', ['k', 'v'], Buffer.from('d\t4\ne\t5\n'), ['d', 'e']);
    await door.insertLines('door_t', ['k', 'v'], Buffer.from('d\t4\ne\t5\n'), ['e', 'd']);
    expect(await count(ch, db, 'door_t', "k IN ('d', 'e')")).toBe(2);
  });

  it('derives the token from the table and the sorted keys', () => {
    expect(dedupToken('t', ['b', 'a'])).toBe(dedupToken('t', ['a', 'b']));
    expect(dedupToken('t', ['a', 'b'])).not.toBe(dedupToken('u', ['a', 'b']));
    expect(dedupToken('t', ['ab'])).not.toBe(dedupToken('t', ['a', 'b']));
  });

  it('lets an API read through after at most the one job statement already running', async () => {
    const { door } = await freshDatabase('door');
    const jobs = door.lane('job');
    const slow = 'SELECT sum(sipHash64(number)) AS s FROM numbers(10000000)';
    const ended: string[] = [];
    // Six job statements queued at once (a job catching up), then a read arrives.
    const queued = Array.from({ length: 6 }, (_, i) => jobs.select(slow).then(() => void ended.push(`job-${i}`)));
    await new Promise((r) => setTimeout(r, 20));
    const asked = performance.now();
    await door.read({ name: 'probe', sql: 'SELECT 1 AS one' }, {}, { limits: { maxExecutionSeconds: 30, maxResultRows: 10 } });
    const waitedMs = performance.now() - asked;
    ended.push('read');
    await Promise.all(queued);
    const allJobsMs = performance.now() - asked;
    if (door.gateState()) {
      // Embedded: one statement at a time, so the read waited for the job statement already running, no more.
      expect(ended.indexOf('read')).toBeLessThanOrEqual(1);
      // Timed within this run: six statements take several times what one does.
      expect(waitedMs).toBeLessThan(allJobsMs * 0.5);
    } else {
      // A server runs them side by side: the read never waits for a job's turn.
      expect(ended.indexOf('read')).toBe(0);
    }
  });

  it('fails the statements of a stopped lane at once, queued ones included, and leaves the rest of the door working', async () => {
    const { door } = await freshDatabase('door');
    const stop = new AbortController();
    const jobs = door.lane('job', stop.signal);
    expect(await jobs.select<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    // A job statement queued behind a running one, then the stop.
    const running = jobs.select('SELECT sum(sipHash64(number)) FROM numbers(5000000)');
    await new Promise((r) => setTimeout(r, 20));
    const queued = jobs.select('SELECT 2 AS two').catch((e: unknown) => e);
    stop.abort();
    // The statement already running ends as it would; the queued one never runs.
    expect(await running).toHaveLength(1);
    // (A server runs it beside the other at once, before the stop.)
    if (door.gateState()) expect(await queued).toMatchObject({ code: 'SHUTTING_DOWN', retryable: false });
    await expect(jobs.command('SELECT 3')).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    expect(await door.select<{ four: number }>('SELECT 4 AS four')).toEqual([{ four: 4 }]);
  });

  it('runs a read beside a running job statement when each lane has its connections, and its values rendered', async () => {
    const { db } = await freshDatabase('door');
    const slow = 'SELECT sum(sipHash64(number)) AS s FROM numbers({n:UInt64})';
    const probe = { name: 'probe', sql: 'SELECT {one:UInt8} AS one, getSetting({s:String}) AS threads' };
    const limits = { limits: { maxExecutionSeconds: 30, maxResultRows: 10 } };
    /**
     * A read asked while a job statement of ~1 s runs on the job lane: when each ended. Compared
     * within one run (which ended first, and the read against that same job statement), not against
     * a job timed apart: on a loaded machine the statement's own duration varies several-fold.
     */
    const readBesideJob = async (door: ReturnType<typeof createClickHouseDoor>) => {
      const t0 = performance.now();
      const job = door.lane('job').select(slow, { n: 20_000_000 }).then(() => performance.now());
      await new Promise((r) => setTimeout(r, 30));
      const asked = performance.now();
      const [read] = await door.read<{ one: number; threads: number }>(probe, { one: 1, s: 'max_threads' }, limits);
      const readEnd = performance.now();
      const jobEnd = await job;
      return { jobMs: jobEnd - t0, readMs: readEnd - asked, readFirst: readEnd < jobEnd, read };
    };
    const lanes = createClickHouseDoor(await testLaneClients({ readConnections: 2, jobThreads: 1 }), db);
    try {
      const parallel = await readBesideJob(lanes);
      // The read did not wait for the job statement (it took a fraction of it), and the job
      // connection's thread limit is its own: the read connection keeps the engine's default.
      expect(parallel.readFirst).toBe(true);
      expect(parallel.readMs).toBeLessThan(parallel.jobMs * 0.3);
      expect(parallel.read?.one).toBe(1);
      expect(Number(parallel.read?.threads)).toBeGreaterThan(1);
      expect(await lanes.lane('job').select("SELECT getSetting('max_threads') AS t, getSetting('os_thread_priority') AS nice")).toEqual([{ t: 1, nice: 19 }]);
      expect(await lanes.select("SELECT getSetting('os_thread_priority') AS nice")).toEqual([{ nice: 0 }]);
      // Bound instead of rendered, the same lanes are one at a time again: chdb-node runs every
      // statement with query parameters through one chain for the whole process.
      if (lanes.gateState()) {
        const bound = createClickHouseDoor(await testLaneClients({ readConnections: 2, jobThreads: 1 }), db, { parameters: 'bind' });
        const serial = await readBesideJob(bound);
        await bound.close();
        expect(serial.readFirst).toBe(false);
      }
    } finally {
      await lanes.close();
    }
  });
});
