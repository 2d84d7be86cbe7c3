/**
 * A task's violations (GET /v1/violations?task_id=) for a small task (looked up through the ids
 * index) and a task past INDEXED_TASK_MAX_CALLS (matched through the set of its calls), among
 * violations of other tasks and of calls stored without a task ('' is their task_id, never a
 * task asked for). The oracle: the violations planted here whose ids name a call of the task.
 */
import { describe, expect, it } from 'vitest';
import { violations } from '../../../queries/violations.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { insertCalls, rawCall, type RawCall } from '../../helpers/raw-calls.ts';

const T0 = Date.UTC(2026, 10, 20);

describe('violations of a task', () => {
  it('finds exactly the violations naming a call of the task, for a small and a large task, and none for the empty task id', async () => {
    const { ch, db, door } = await freshDatabase('vt');
    const calls = (task: string, n: number) => Array.from({ length: n }, (_, i) => rawCall({ tool_id: 'search', t: T0 + i, task_id: task, args: { task, i } }));
    const big = calls('big', 1200);
    const small = calls('small', 5);
    const loose = calls('', 50);
    await insertCalls(ch, db, [...big, ...small, ...loose]);
    // Violations naming: big calls (some with a call of another task), small calls, loose calls, and an id nothing stores.
    const planted: Array<{ key: string; ids: string[] }> = [];
    const plant = (ids: string[]) => planted.push({ key: `v${planted.length}`, ids });
    for (let i = 0; i < 1200; i += 37) plant([(big[i] as RawCall).call_id]);
    plant([(big[5] as RawCall).call_id, (small[1] as RawCall).call_id]);
    plant([(small[3] as RawCall).call_id]);
    for (const c of loose.slice(0, 10)) plant([c.call_id]);
    plant(['00000000-0000-4000-8000-000000000000']);
    await ch.insert({
      table: `${db}.violations`,
      values: planted.map((v, i) => ({ violation_key: v.key, invariant: 'I4', packet_type: 'tool_call', ids: v.ids, detail: v.key, detected_at: new Date(T0 + 60_000 + i).toISOString().replace('T', ' ').replace('Z', '') })),
      format: 'JSONEachRow',
    });
    const window = { fromMs: T0, toMs: T0 + 86_400_000 };
    const keysOf = async (taskId?: string) => (await violations(door, db, { window, limit: 1000, ...(taskId === undefined ? {} : { taskId }) }, DEFAULT_QUERY_CONTEXT)).violations.map((v) => v.detail).sort();
    const expected = (task: RawCall[]) => planted.filter((v) => v.ids.some((id) => task.some((c) => c.call_id === id))).map((v) => v.key).sort();
    expect(expected(big).length).toBe(34);
    expect(await keysOf('big')).toEqual(expected(big));
    expect(await keysOf('small')).toEqual(expected(small));
    expect(await keysOf('nobody')).toEqual([]);
    // No task asked: every violation (the task-less calls' ones too).
    expect(await keysOf()).toEqual(planted.map((v) => v.key).sort());
  });
});
