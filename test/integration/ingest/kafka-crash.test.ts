/**
 * The crash oracle: `tool-audit ingest` is SIGKILLed and restarted repeatedly while it
 * consumes 200,000 packets; afterwards every valid packet is in its segment exactly once
 * (count() = uniqExact(call_id), no FINAL) and every invalid one is in quarantine once.
 * This file opens no other ClickHouse: embedded chDB admits one data directory per process,
 * and the ingest child owns this one until it is stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClickHouse } from '../../../platform/clickhouse/client.ts';
import { rows } from '../../helpers/clickhouse.ts';
import { brokers, committedTotal, createTopics, eventually, groupLag, produceAll, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { mixedStream } from '../../helpers/workload.ts';
import { testPort } from '../../helpers/ports.ts';

const PACKETS = Number(process.env.CRASH_TEST_PACKETS ?? 200_000);
const MIN_KILLS = Number(process.env.CRASH_TEST_KILLS ?? 5);
const root = new URL('../../../', import.meta.url).pathname;

describe('ingest survives repeated SIGKILL', () => {
  it(`keeps the oracle over ${PACKETS} packets and ≥ ${MIN_KILLS} kills`, async () => {
    const names = uniqueNames('crash');
    const kafka = testKafka();
    await createTopics(kafka, [
      { topic: names.topic, partitions: 6 },
      { topic: names.dlqTopic, partitions: 1 },
    ]);
    const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-crash-'));
    const db = 'crash_test';
    const env: Record<string, string | undefined> = {
      ...process.env,
      KAFKA_BROKERS: brokers().join(','),
      KAFKA_TOPIC: names.topic,
      KAFKA_DLQ_TOPIC: names.dlqTopic,
      KAFKA_GROUP_ID: names.groupId,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      TOOL_AUDIT_DATA_DIR: dataDir,
      CLICKHOUSE_DATABASE: db,
      LOG_LEVEL: 'warn',
      PORT: String(testPort()),
    };
    delete env.CLICKHOUSE_URL;
    let child: ChildProcess | undefined;
    let stderr = '';
    const startChild = () => {
      child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'ingest'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
      return child;
    };
    const exit = (c: ChildProcess) => new Promise<number | null>((r) => (c.exitCode !== null || c.signalCode ? r(c.exitCode) : c.on('exit', (code) => r(code))));

    const msgs = mixedStream(PACKETS, { invalidEvery: 97, tasks: 5000 });
    const producing = produceAll(kafka, names.topic, msgs, 5000);
    const admin = kafka.admin();
    await admin.connect();
    let kills = 0;
    const lagAtKills: number[] = [];
    const committedAtKills: number[] = [];
    let produced = false;
    void producing.then(() => (produced = true));
    startChild();
    // Kills spread over the run: short lives die before their first commit (mid-decode or
    // mid-insert), long lives die once they committed past the next milestone, mid-round.
    const step = Math.floor(PACKETS / (MIN_KILLS + 2));
    while (kills < MIN_KILLS || !produced) {
      if (kills % 2 === 0) {
        await new Promise((r) => setTimeout(r, 1500 + Math.random() * 2500));
      } else {
        const target = (await committedTotal(admin, names.groupId, names.topic)) + step;
        // A restarted worker loads its key filter and reconnects first: on a loaded machine that took
        // over 40 s, and lives that short never committed between two kills.
        await eventually(async () => (await committedTotal(admin, names.groupId, names.topic)) >= target, 90_000, 'a milestone').catch(() => undefined);
        await new Promise((r) => setTimeout(r, Math.random() * 1500));
      }
      const c = child as ChildProcess;
      lagAtKills.push(await groupLag(admin, names.groupId, names.topic));
      committedAtKills.push(await committedTotal(admin, names.groupId, names.topic));
      c.kill('SIGKILL');
      await exit(c);
      kills++;
      startChild();
    }
    await producing;
    await eventually(async () => (await groupLag(admin, names.groupId, names.topic)) === 0, 300_000, 'the restarted worker to catch up');
    await admin.disconnect();
    // SIGTERM once the last worker is up (it drains and commits; before start-up it would just die).
    await eventually(async () => (await fetch(`http://127.0.0.1:${env.PORT}/readyz`).catch(() => undefined))?.ok === true, 60_000, 'the last worker to be ready');
    const last = child as ChildProcess;
    last.kill('SIGTERM');
    expect(await exit(last), stderr).toBe(0);

    const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: db, dataDir });
    const want = (k: string) => msgs.filter((m) => m.expect === k).length;
    const [inv] = await rows<{ c: string; u: string }>(ch, 'SELECT count() AS c, uniqExact(call_id) AS u FROM {db:Identifier}.tool_invocations', { db });
    const [out] = await rows<{ c: string; u: string }>(ch, 'SELECT count() AS c, uniqExact(output_id) AS u FROM {db:Identifier}.tool_outputs', { db });
    const [q] = await rows<{ c: string; u: string }>(ch, 'SELECT count() AS c, uniqExact(source_key) AS u FROM {db:Identifier}.quarantine', { db });
    await ch.close();
    const report = { packets: PACKETS, kills, lagAtKills, committedAtKills, invocations: inv, outputs: out, quarantine: q, expected: { inv: want('invocation'), out: want('output'), q: want('quarantine') } };
    process.stdout.write(`crash test: ${JSON.stringify(report)}\n`);
    expect(Number(inv?.c)).toBe(want('invocation'));
    expect(inv?.u).toBe(inv?.c);
    expect(Number(out?.c)).toBe(want('output'));
    expect(out?.u).toBe(out?.c);
    expect(Number(q?.c)).toBe(want('quarantine'));
    expect(q?.u).toBe(q?.c);
    expect(Number(inv?.c) + Number(out?.c) + Number(q?.c)).toBe(PACKETS);
    expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
    // The kills landed while work was in flight, and the workers made progress between them.
    expect(lagAtKills.filter((l) => l > 0).length).toBeGreaterThanOrEqual(Math.min(3, MIN_KILLS));
    const progressed = committedAtKills.filter((c, i) => i > 0 && c > (committedAtKills[i - 1] ?? 0)).length;
    expect(progressed, `commits between kills: ${committedAtKills.join(', ')}`).toBeGreaterThanOrEqual(Math.min(2, MIN_KILLS - 1));
  }, 900_000);
});
