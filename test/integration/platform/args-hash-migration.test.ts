/**
 * Migration 022: args_hash stops being stored and is derived from the stored args.
 * An audit store must not change what it answers, so on a store holding a call whose args_hash is
 * not the SHA-256 of its args the migration stops with a clear error; once that call is gone it
 * runs, and every call reads the args_hash it was stored with. The oracle is Node's SHA-256.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../../platform/clickhouse/migrate.ts';
import { doorOf, freshDatabase, rows } from '../../helpers/clickhouse.ts';

const RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('migration 022: args_hash derived from args', () => {
  it('refuses a store where a call breaks I5, then derives args_hash and args_key as they were stored', async () => {
    const { ch, db } = await freshDatabase('m022');
    const q = (query: string, params: Record<string, unknown> = {}) => ch.command({ query, query_params: { db, ...params } });
    // The table as before 022: args_hash a stored column, args_key computed from it.
    await q('ALTER TABLE {db:Identifier}.tool_invocations DROP COLUMN args_hash');
    await q('ALTER TABLE {db:Identifier}.tool_invocations ADD COLUMN args_hash FixedString(64) AFTER args');
    await q('ALTER TABLE {db:Identifier}.tool_invocations MODIFY COLUMN args_key UInt64 MATERIALIZED cityHash64(tool_id, args_hash)');
    const good = ['{"q": "caf\\u00e9"}', '{}'];
    const insert = (args: string, hash: string, n: number) =>
      q(
        `INSERT INTO {db:Identifier}.tool_invocations (call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, args_hash, status, duration_ms, result_summary, created_at, fingerprint, source)
         VALUES (generateUUIDv4(), 't', 'search', 'A', 'gateway', 'g', {args:String}, {hash:String}, 'success', 1, '{}', now64(3), repeat('0', 32), {src:String})`,
        { args, hash, src: `test@${n}` },
      );
    for (const [i, a] of good.entries()) await insert(a, sha(a), i);
    await insert('{"q": 1}', 'f'.repeat(64), 9);
    const before = await rows<{ args: string; args_hash: string; args_key: string }>(ch, 'SELECT args, args_hash, toString(args_key) AS args_key FROM {db:Identifier}.tool_invocations ORDER BY source', { db });
    await q("DELETE FROM {db:Identifier}.schema_migrations WHERE name = '022_args_hash_derived.sql'");

    await expect(migrate(doorOf(ch, db), { retentionDays: RETENTION })).rejects.toMatchObject({
      code: 'MIGRATION_FAILED',
      message: expect.stringContaining('args_hash that is not the SHA-256 of their args'),
    });
    // Nothing was changed: the column is still stored, the bad call still reads as stored.
    expect(await rows(ch, 'SELECT args, args_hash, toString(args_key) AS args_key FROM {db:Identifier}.tool_invocations ORDER BY source', { db })).toEqual(before);

    await q("ALTER TABLE {db:Identifier}.tool_invocations DELETE WHERE source = 'test@9' SETTINGS mutations_sync = 2");
    expect((await migrate(doorOf(ch, db), { retentionDays: RETENTION })).applied).toEqual(['022_args_hash_derived.sql']);
    const after = await rows<{ args: string; args_hash: string; args_key: string }>(ch, 'SELECT args, args_hash, toString(args_key) AS args_key FROM {db:Identifier}.tool_invocations ORDER BY source', { db });
    expect(after).toEqual(before.slice(0, 2));
    expect(after.map((r) => r.args_hash)).toEqual(good.map(sha));
    const kind = await rows<{ default_kind: string }>(ch, "SELECT default_kind FROM system.columns WHERE database = {db:String} AND table = 'tool_invocations' AND name = 'args_hash'", { db });
    expect(kind).toEqual([{ default_kind: 'ALIAS' }]);
  });
});
