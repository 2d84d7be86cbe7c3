/**
 * verify compares each kind's rows with its leaves as a whole before it joins them slice by slice:
 * an untouched log needs no join, rows that retention took are counted and not reported, and
 * whatever is not exactly the log — a record stored twice and logged twice, a row swapped for a
 * forged one of the same count — still goes to the join, which names it. The oracle of each case
 * is what the test itself did to the tables.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '../../../analyzers/audit-log/verify.ts';
import { auditLogSetup, RETENTION, tick } from '../../helpers/audit-log.ts';
import { toolCall } from '../../helpers/packets.ts';

const brief = (f: { what: string; kind?: string; key?: string }) => `${f.what} ${f.kind ?? ''} ${f.key ?? ''}`.trim();

describe('audit log verify: each kind as a whole first', () => {
  it('joins nothing when untouched, counts what retention took, and joins a kind that is not exactly its leaves', async () => {
    const t = await auditLogSetup('verify_kinds');
    const calls = Array.from({ length: 30 }, (_, i) => toolCall({ args: { i }, created_at: new Date().toISOString() }, `task-${i % 3}`));
    await t.write(calls);
    const b = t.builder();
    await tick();
    await b.runOnce();

    const clean = await verifyLog(t.door, { retentionDays: RETENTION });
    expect(clean.findings).toEqual([]);
    expect(clean.joined).toEqual([]);
    expect(clean.checkedLeaves).toBe(clean.treeSize);

    // Retention: verify ten days on with calls kept one day, every call is past its limit. Two rows
    // removed (as the TTL would) are expiry: counted, not reported, and the kind still needs no join.
    const gone = [calls[3], calls[4]].map((c) => c?.call_id as string);
    await t.door.command('ALTER TABLE {db:Identifier}.tool_invocations DELETE WHERE call_id IN ({a:UUID}, {b:UUID}) SETTINGS mutations_sync = 2', { a: gone[0], b: gone[1] });
    const later = await verifyLog(t.door, { retentionDays: { ...RETENTION, tool_call: 1 }, now: Date.now() + 10 * 86_400_000 });
    expect(later.findings).toEqual([]);
    expect(later.expired).toBe(2);
    expect(later.joined).toEqual([]);
    // Without that retention the same two are deletions, named by the join.
    const now = await verifyLog(t.door, { retentionDays: RETENTION });
    expect(now.joined).toEqual(['tool_call']);
    expect(now.findings.map(brief).sort()).toEqual(gone.map((id) => `deleted tool_call ${id}`).sort());

    // As many rows as leaves, but one a forgery in place of a deleted call: the counts agree, the
    // hashes do not, and the join names both.
    const forged = randomUUID();
    await t.door.command(
      'INSERT INTO {db:Identifier}.tool_invocations SELECT * REPLACE (toUUID({id:String}) AS call_id) FROM (SELECT * FROM {db:Identifier}.tool_invocations WHERE call_id = {from:UUID})',
      { id: forged, from: calls[5]?.call_id },
    );
    await t.door.command('INSERT INTO {db:Identifier}.tool_invocations SELECT * REPLACE (toUUID({id:String}) AS call_id) FROM (SELECT * FROM {db:Identifier}.tool_invocations WHERE call_id = {from:UUID})', {
      id: randomUUID(),
      from: calls[6]?.call_id,
    });
    const [n] = await t.door.select<{ rows: string; leaves: string }>(
      "SELECT (SELECT count() FROM {db:Identifier}.tool_invocations) AS rows, (SELECT count() FROM {db:Identifier}.audit_log_leaves WHERE kind = 'tool_call') AS leaves",
    );
    expect(Number(n?.rows)).toBe(Number(n?.leaves));
    const swapped = await verifyLog(t.door, { retentionDays: RETENTION });
    expect(swapped.joined).toEqual(['tool_call']);
    expect(swapped.findings.map(brief)).toContain(`inserted tool_call ${forged}`);
    expect(swapped.found.inserted).toBe(2);
    expect(swapped.found.deleted).toBe(2);
  }, 120_000);

  it('joins every kind when a record is stored twice and both copies were logged', async () => {
    const t = await auditLogSetup('verify_kinds_twice');
    const calls = Array.from({ length: 10 }, (_, i) => toolCall({ args: { i }, created_at: new Date().toISOString() }, 'task-t'));
    await t.write(calls);
    const twice = calls[2]?.call_id as string;
    // A second row of a stored call, written with SQL before the builder ran: the log takes both.
    await t.door.command('INSERT INTO {db:Identifier}.tool_invocations SELECT * REPLACE (duration_ms + 1 AS duration_ms) FROM (SELECT * FROM {db:Identifier}.tool_invocations WHERE call_id = {id:UUID})', { id: twice });
    await tick();
    await t.builder().runOnce();
    const [logged] = await t.door.select<{ n: string }>("SELECT count() AS n FROM {db:Identifier}.audit_log_leaves WHERE kind = 'tool_call' AND record_key = {k:String}", { k: twice });
    expect(Number(logged?.n)).toBe(2);
    const r = await verifyLog(t.door, { retentionDays: RETENTION });
    expect(r.joined).toEqual(['tool_call']);
    // Named once per leaf of it.
    expect(r.findings.map(brief)).toEqual([`inserted tool_call ${twice}`, `inserted tool_call ${twice}`]);
  }, 120_000);
});
