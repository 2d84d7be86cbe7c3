/**
 * What the audit of a call depends on is in the audit log: manifest versions, MCP tool
 * definitions, budget decisions, model turns and agent runs are leaves — those stored before the log knew their kind are
 * appended once, a decision written late (held while ClickHouse refused it) is sequenced by when
 * it was stored — and a deleted manifest version, a changed definition, a turn whose cost was
 * rewritten or a run renamed is named by verify.
 */
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { applyMcpTools } from '../../../analyzers/mcp-store.ts';
import { writeWatermark } from '../../../analyzers/store.ts';
import { leafDataOf } from '../../../analyzers/audit-log/leaf-data.ts';
import { checkProof } from '../../../analyzers/audit-log/proof-check.ts';
import { LEAF_KINDS, leafFields, leafTextsSelect } from '../../../analyzers/audit-log/leaf-sql.ts';
import { verifyLog } from '../../../analyzers/audit-log/verify.ts';
import { chTime } from '../../../platform/clickhouse/statement.ts';
import { auditLogSetup, RETENTION, tick } from '../../helpers/audit-log.ts';
import { manifestOf } from '../../helpers/manifests.ts';
import { toolCall } from '../../helpers/packets.ts';

describe('audit log: what the audit of a call depends on', () => {
  it('logs manifest versions, MCP definitions, budget decisions, model turns and agent runs, those stored before included, and names a deleted version, an altered turn and a renamed run', async () => {
    const t = await auditLogSetup('witness_manifests');
    // Stored an hour ago, behind a watermark a builder that did not log these kinds left.
    const hourAgo = Date.now() - 3_600_000;
    const v1 = await applyManifest(t.door, manifestOf({ search_web: { idempotent: true }, fetch_page: {} }), hourAgo);
    await t.door.command('ALTER TABLE {db:Identifier}.tool_manifests UPDATE applied_at = fromUnixTimestamp64Milli({t:Int64}) WHERE 1 SETTINGS mutations_sync = 2', { t: hourAgo });
    await writeWatermark(t.door, 'audit-log', Date.now() - 60_000);
    await tick();
    const mcp = await applyMcpTools(t.door, { server: 'files', server_info: null, tools: [{ name: 'read', description: 'reads a file', inputSchema: { type: 'object' } }], seen_at: new Date().toISOString() });
    expect(mcp.answer.version).toBe(2);
    const turnId = randomUUID();
    const turn = { type: 'model_turn', turn: { turn_id: turnId, task_id: 'task-m', agent_id: 'planner', model: 'gpt-4o', provider: 'openai', input_tokens: 1000, output_tokens: 50, cached_input_tokens: null, cost_usd: 0.01, cost_source: 'reported', duration_ms: 700, status: 'success', error: null, requested_tool_calls: [{ id: 'tc-1', tool_id: 'search_web' }], trace_id: null, span_id: null, created_at: new Date().toISOString() } };
    // A turn with its messages (stored with OTLP_TURN_MESSAGES=on): one more field in its leaf.
    const talkId = randomUUID();
    const talk = { type: 'model_turn', turn: { ...turn.turn, turn_id: talkId, messages: '{"gen_ai.input.messages":"[{\\"role\\":\\"user\\"}]"}' } };
    const runId = randomUUID();
    const agentRun = { type: 'agent_run', run: { run_id: runId, task_id: 'task-m', agent_id: 'planner', name: 'refund request', duration_ms: 2400, status: 'success', error: null, trace_id: null, span_id: null, parent_span_id: null, created_at: new Date().toISOString() } };
    await t.write([toolCall({ args: { n: 1 }, created_at: new Date().toISOString() }, 'task-m'), turn, talk, agentRun]);
    // A budget decision taken an hour ago and written only now (held while ClickHouse refused it):
    // sequenced by when it was stored, so it is a leaf all the same.
    const decision = randomUUID();
    await t.door.insertRows('budget_decisions', [{ key: decision, row: { decision_id: decision, decided_at: chTime(hourAgo), agent_id: 'a', tool_id: 'search_web', task_id: '', call_id: '', projected_cost_usd: 0.5, decision: 'allow', budgets: '[]', budget_version: 1, key_id: '' } }]);
    const b = t.builder();
    const run = await b.runOnce();
    const kinds = await t.door.select<{ kind: string; n: string }>('SELECT kind, count() AS n FROM {db:Identifier}.audit_log_leaves GROUP BY kind ORDER BY kind');
    // Version 1 (two tools) from the backfill; version 2 (the MCP server's tool merged into the manifest), its definition, the call.
    const [rows] = await t.door.select<{ n: string }>('SELECT count() AS n FROM {db:Identifier}.tool_manifests');
    expect(kinds.map((k) => [k.kind, Number(k.n)])).toEqual([['agent_run', 1], ['budget_decision', 1], ['manifest', Number(rows?.n)], ['mcp_definition', 1], ['model_turn', 2], ['tool_call', 1]]);
    expect(run.treeSize).toBe(Number(rows?.n) + 6);
    expect(v1.version).toBe(1);
    expect((await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness() })).findings).toEqual([]);
    // A proof writes a row's leaf data from its fields' texts in JavaScript: for every row of every
    // kind stored here, SHA-256(0x00 ‖ that data) is the leaf hash ClickHouse computed in SQL.
    for (const kind of LEAF_KINDS) {
      const leaves = new Map((await t.door.select<{ k: string; h: string }>('SELECT record_key AS k, lower(hex(leaf_hash)) AS h FROM {db:Identifier}.audit_log_leaves WHERE kind = {kind:String}', { kind })).map((r) => [r.k, r.h]));
      const rows = await t.door.select<Record<string, string | null>>(leafTextsSelect(kind, '1'));
      const hashes = rows.map((r) => createHash('sha256').update(Buffer.concat([Buffer.from([0]), Buffer.from(leafDataOf(kind, leafFields(kind).map((_, i) => r[`f${i}`] ?? null)))])).digest('hex'));
      expect(hashes.sort(), kind).toEqual([...leaves.values()].sort());
    }
    // The turn's proof (GET /v1/turns/{id}/proof) checks offline; its data altered, it does not.
    const proof = await t.queries.turnProof({ turnId });
    if ('why' in proof) throw new Error(`no proof: ${proof.why}`);
    expect(proof.leaf).toMatchObject({ kind: 'model_turn', key: turnId });
    expect(checkProof(proof, t.keys.publicKey).ok).toBe(true);
    const forged = checkProof({ ...proof, leaf: { ...proof.leaf, data: proof.leaf.data.replace('4:0.01\n', '6:0.0001\n') } }, t.keys.publicKey);
    expect(forged.checks.find((c) => c.check === 'the leaf is the record')?.ok).toBe(false);
    // A turn's messages are in its leaf (after its other fields), and its proof checks too.
    const talkProof = await t.queries.turnProof({ turnId: talkId });
    if ('why' in talkProof) throw new Error(`no proof: ${talkProof.why}`);
    expect(talkProof.leaf.data.endsWith(`${Buffer.byteLength(talk.turn.messages)}:${talk.turn.messages}\n`)).toBe(true);
    expect(proof.leaf.data).not.toContain('gen_ai.input.messages');
    expect(checkProof(talkProof, t.keys.publicKey).ok).toBe(true);
    // So does the run's (GET /v1/runs/{id}/proof), the task's name in its leaf.
    const runProof = await t.queries.runProof({ runId });
    if ('why' in runProof) throw new Error(`no proof: ${runProof.why}`);
    expect(runProof.leaf).toMatchObject({ kind: 'agent_run', key: runId });
    expect(runProof.leaf.data).toContain('14:refund request\n');
    expect(checkProof(runProof, t.keys.publicKey).ok).toBe(true);
    // A second run adds nothing: the backfill is done, the rows are leaves.
    expect((await b.runOnce()).added).toBe(0);

    await t.door.command("ALTER TABLE {db:Identifier}.tool_manifests DELETE WHERE version = 1 AND tool_id = 'fetch_page' SETTINGS mutations_sync = 2");
    await t.door.command("ALTER TABLE {db:Identifier}.mcp_tool_definitions UPDATE definition = replace(definition, 'reads a file', 'reads nothing') WHERE 1 SETTINGS mutations_sync = 2");
    // With SQL only: the turn's cost made smaller (what a budget counted).
    await t.door.command('ALTER TABLE {db:Identifier}.model_turns UPDATE cost_usd = 0.0001 WHERE turn_id = {id:UUID} SETTINGS mutations_sync = 2', { id: turnId });
    // And what the model was told, with SQL only.
    await t.door.command("ALTER TABLE {db:Identifier}.model_turns UPDATE messages = '{}' WHERE turn_id = {id:UUID} SETTINGS mutations_sync = 2", { id: talkId });
    // And the task renamed.
    await t.door.command("ALTER TABLE {db:Identifier}.agent_runs UPDATE name = 'routine check' WHERE 1 SETTINGS mutations_sync = 2");
    const found = (await verifyLog(t.door, { retentionDays: RETENTION, witness: t.witness() })).findings.map((f) => `${f.what} ${f.kind ?? ''} ${f.key ?? ''}`.trim());
    expect(found.sort()).toEqual([`altered mcp_definition files/read/${mcp.answer.version}/added/${(await t.door.select<{ h: string }>('SELECT definition_hash AS h FROM {db:Identifier}.mcp_tool_definitions'))[0]?.h}`, 'deleted manifest 1/fetch_page', `altered model_turn ${turnId}`, `altered model_turn ${talkId}`, `altered agent_run ${runId}`].sort());
  }, 120_000);
});
