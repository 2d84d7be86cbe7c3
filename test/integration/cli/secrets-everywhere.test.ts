/**
 * Secrets never stored, through every entry path as deployed: `tool-audit serve` on
 * embedded ClickHouse with Kafka, and real clients — the TypeScript emitter redacting at the edge
 * (HTTP and Kafka) and not (Kafka), the Python emitter both ways (HTTP), the MCP gateway over stdio
 * and over Streamable HTTP, raw POST /v1/packets, raw Kafka records, and OpenTelemetry spans
 * exported by the SDK to POST /v1/traces — valid packets and invalid ones, each path also sending
 * the whole secrets fixture (150+ secrets in 100+ shapes, test/helpers/secret-fixture.ts).
 * Afterwards no planted secret is in any API answer (task views, quarantine, an export, search
 * hits), any log line of serve or the gateways, any record tool-audit produced to the packet topic
 * (the edge's, the keyed emitter's), or any String column of any table (read from the data
 * directory by another process once serve has exited); and the same secret args sent through five
 * paths are one args_hash: repeats stay repeats.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { auditResult, createAuditEmitter } from '../../../emit/index.ts';
import { brokers, readTopic, testKafka } from '../../helpers/kafka.ts';
import { python, root, testServer } from '../../helpers/mcp.ts';
import { dependency, toolCall } from '../../helpers/packets.ts';
import { FIXTURE_CALLS, FIXTURE_PYTHON, fixtureArgsJson, fixturePackets, fixtureSpans, fixtureViaEmitter, fixtureViaMcp } from '../../helpers/fixture-paths.ts';
import { FIXTURE_SECRETS } from '../../helpers/secret-fixture.ts';
import { testPort } from '../../helpers/ports.ts';
import { seedDataDir } from '../../helpers/data-template.ts';

const KEY = 'secrets-e2e-admin-key-0123';
const REDACTION_KEY = 'secrets-e2e-redaction-key-0123456789';
const AWS = 'AKIAIOSFODNN7EXAMPLE';
const GH = `ghp_${'Zq8Wx7Ec6R'.repeat(4)}`;
const DB_PW = 'Tr0ub4dor-and-3';
const PEM_BODY = 'MIIEpAIBAAKCAQEAwJ6f0lsz7Kqz';
const PEM = `-----BEGIN OPENSSH PRIVATE KEY-----\n${PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----`;
const CARD = '4242 4242 4242 4242';
// With a piece of AWS: what a JSON parse error quotes of a text that breaks right at a secret.
const SECRETS = [AWS, GH, DB_PW, PEM_BODY, CARD, AWS.slice(0, 10)];
/** With the fixture's 150+: every secret looked for. */
const ALL_SECRETS = [...SECRETS, ...FIXTURE_SECRETS];
/** The args every path sends once (tool vault_read): one args_hash once redacted. */
const ARGS = { path: 'kv/prod', token: `token ${GH}`, dsn: `postgres://app:${DB_PW}@db:5432/x`, note: `rotate ${AWS}` };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** A child whose stdout and stderr are kept whole: the log lines searched for secrets. */
function spawnLogged(argv: string[], env: Record<string, string>): { child: ChildProcess; log: () => string; exited: Promise<number | null> } {
  let log = '';
  const child = spawn(argv[0] as string, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, log: () => log, exited };
}

const listening = (port: number) =>
  new Promise<true | undefined>((resolve) => {
    const s = tcpConnect(port, '127.0.0.1', () => (s.end(), resolve(true)));
    s.once('error', () => resolve(undefined));
  });

describe('secrets through every entry path', () => {
  it('are in no table, no log line and no API answer, and repeats stay repeats', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'tool-audit-secrets-')), 'data');
    const port = testPort();
    const url = `http://127.0.0.1:${port}`;
    const topic = `ta.secrets-${randomUUID().slice(0, 8)}`;
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !['CLICKHOUSE_URL', 'TOOL_AUDIT_URL', 'TOOL_AUDIT_API_KEY'].includes(k)) base[k] = v;
    const serveEnv = { ...base, PORT: String(port), TOOL_AUDIT_DATA_DIR: dataDir, TOOL_AUDIT_API_KEYS: `${KEY}:ingest,read,admin`, KAFKA_BROKERS: brokers().join(','), KAFKA_TOPIC: topic, KAFKA_DLQ_TOPIC: `${topic}.dlq`, KAFKA_GROUP_ID: `g-${topic}`, LOG_LEVEL: 'debug', REDACTION_KEY, ANALYZER_ENABLED: 'false' };
    await seedDataDir(dataDir);
    const serve = spawnLogged([process.execPath, join(root, 'bin/tool-audit.mjs'), 'serve'], serveEnv);
    const clientEnv = { ...base, TOOL_AUDIT_URL: url, TOOL_AUDIT_API_KEY: KEY, LOG_LEVEL: 'debug', REDACTION_KEY };
    delete (clientEnv as Record<string, string>).KAFKA_BROKERS;
    const gatewayLogs: Array<() => string> = [];
    try {
      await waitFor('serve /readyz', 90_000, async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined));
      const tasks = { tsEdge: `ts-edge-${randomUUID()}`, tsKafka: `ts-kafka-${randomUUID()}`, tsKafkaKeyed: `ts-kafka-keyed-${randomUUID()}`, post: `post-${randomUUID()}`, kafkaRaw: `kafka-raw-${randomUUID()}`, pyEdge: `py-edge-${randomUUID()}`, pyNet: `py-net-${randomUUID()}`, otlp: `otlp-${randomUUID()}` };
      const startedMs = Date.now() - 60_000;

      // TypeScript emitter: redacting at the edge over HTTP and over Kafka, and not redacting over
      // Kafka (ingest's safety net). Each sends the fixture besides.
      const edge = createAuditEmitter({ orchestrator: 'kernel', agentId: 'L', http: { url, apiKey: KEY }, redaction: { key: REDACTION_KEY } });
      const plain = createAuditEmitter({ orchestrator: 'kernel', agentId: 'L', kafka: { brokers: brokers(), topic } });
      const keyedKafka = createAuditEmitter({ orchestrator: 'kernel', agentId: 'L', kafka: { brokers: brokers(), topic }, redaction: { key: REDACTION_KEY } });
      for (const [emitter, task] of [[edge, tasks.tsEdge], [plain, tasks.tsKafka], [keyedKafka, tasks.tsKafkaKeyed]] as const) {
        await emitter.invoke('vault_read', ARGS, async () => auditResult('ok', { resultSummary: { card: CARD }, content: `key:\n${PEM}\n` }), { taskId: task });
        await emitter.invoke('deploy', { env: 'prod' }, async () => {
          throw new Error(`403 for ${AWS}`);
        }, { taskId: task }).catch(() => undefined);
        await fixtureViaEmitter(emitter, task);
        expect(await emitter.flush(20_000)).toBe(true);
        await emitter.close();
      }

      // Raw packets over HTTP: a valid call and an invalid one (I3), both holding secrets.
      const posted = toolCall({ args: ARGS, tool_id: 'vault_read', created_at: new Date().toISOString() }, tasks.post);
      const invalid = toolCall({ args: { k: GH }, status: 'success', error: `boom ${AWS}`, created_at: new Date().toISOString() }, tasks.post);
      // A dependency whose data_flow names a token, and a packet refused for an unknown key that is
      // a secret itself (the schema's reason quotes unknown keys).
      const handed = dependency({ task_id: tasks.post, data_flow: `passed ${GH} on` });
      const keyed = { ...toolCall({ created_at: new Date().toISOString() }, tasks.post), [AWS]: true };
      const res = await fetch(`${url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify([posted, invalid, handed, keyed]) });
      expect(res.status).toBe(200);
      expect(JSON.stringify(await res.json())).not.toContain(AWS);
      const fixtureRes = await fetch(`${url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(fixturePackets(tasks.post)) });
      expect(fixtureRes.status).toBe(200);
      expect((await fixtureRes.json()) as { accepted: number }).toMatchObject({ accepted: FIXTURE_CALLS });

      // Raw Kafka records: one that is not JSON at all, with a secret in it.
      const producer = testKafka('secrets-e2e').producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'x', value: `not json, password=${DB_PW}; key ${AWS}` }, { key: 'y', value: `{"key": ${AWS}}` }, ...fixturePackets(tasks.kafkaRaw).map((p) => ({ key: tasks.kafkaRaw, value: JSON.stringify(p) }))].map((m) => ({ ...m, headers: { 'x-test-producer': 'raw' } })) });
      await producer.disconnect();

      // Python emitter: redacting at the edge, and not (ingest's safety net).
      const script = `
import sys
sys.path.insert(0, sys.argv[1])
from tool_audit_emit import AuditEmitter
url, key, rkey, task_edge, task_net = sys.argv[2:7]
args = ${JSON.stringify(ARGS)}
for task, redaction in ((task_edge, {"key": rkey}), (task_net, None)):
    audit = AuditEmitter("gateway", "py", http={"url": url, "api_key": key}, redaction=redaction)
    with audit.call("vault_read", args, task_id=task) as call:
        call.set_result({"content": [{"type": "text", "text": "card ${CARD}"}]})
    assert audit.flush(10)
    audit.close()
`;
      execFileSync(python(), ['-c', script, join(root, 'emit-python'), url, KEY, REDACTION_KEY, tasks.pyEdge, tasks.pyNet], { encoding: 'utf8' });
      for (const [task, rkey] of [[tasks.pyEdge, REDACTION_KEY], [tasks.pyNet, '']]) {
        execFileSync(python(), ['-c', FIXTURE_PYTHON, join(root, 'emit-python'), url, KEY, rkey as string, task as string], { encoding: 'utf8', input: fixtureArgsJson() });
      }

      // OpenTelemetry: a tool span exported by the SDK (protobuf), its arguments and result holding secrets.
      const memory = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'kernel' }), spanProcessors: [new SimpleSpanProcessor(memory)] });
      const tracer = provider.getTracer('agent', '1.0.0');
      const agent = tracer.startSpan('invoke_agent QA');
      const span = tracer.startSpan('execute_tool vault_read', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'vault_read', 'gen_ai.tool.call.id': 'call_1', 'gen_ai.tool.call.arguments': JSON.stringify(ARGS), 'gen_ai.tool.call.result': `{"dsn":"postgres://app:${DB_PW}@db/x"}`, 'tool_audit.task_id': tasks.otlp } }, trace.setSpan(ROOT_CONTEXT, agent));
      span.end();
      fixtureSpans(tracer, trace.setSpan(ROOT_CONTEXT, agent), tasks.otlp);
      agent.end();
      const code = await new Promise<number>((resolve) => new OTLPTraceExporter({ url: `${url}/v1/traces`, headers: { authorization: `Bearer ${KEY}` } }).export(memory.getFinishedSpans(), (r) => resolve(r.code)));
      expect(code).toBe(0);

      // The MCP gateway over stdio (it redacts: REDACTION_KEY is set) …
      const stdioTask = `mcp-stdio-${randomUUID()}`;
      const transport = new StdioClientTransport({ command: process.execPath, args: [join(root, 'bin/tool-audit.mjs'), 'mcp', '--task-id', stdioTask, '--', ...testServer('stdio')], env: clientEnv, stderr: 'pipe' });
      let stdioLog = '';
      transport.stderr?.on('data', (d: Buffer) => (stdioLog += d.toString()));
      gatewayLogs.push(() => stdioLog);
      const client = new Client({ name: 'secrets-client', version: '1.0.0' });
      await client.connect(transport);
      await fixtureViaMcp(client);
      expect(JSON.stringify(await client.callTool({ name: 'lookup', arguments: { key: `${AWS} ${GH}` } }))).toContain(AWS); // the client gets its answer untouched
      await client.close();

      // … and over Streamable HTTP, in front of an HTTP MCP server.
      const upstreamPort = testPort();
      const upstream = spawnLogged(testServer('http', upstreamPort), base);
      await waitFor('the MCP server', 30_000, () => listening(upstreamPort));
      const gwPort = testPort();
      const gw = spawnLogged([process.execPath, join(root, 'bin/tool-audit.mjs'), 'mcp', '--upstream', `http://127.0.0.1:${upstreamPort}/mcp`, '--listen', `127.0.0.1:${gwPort}`], clientEnv);
      gatewayLogs.push(gw.log);
      await waitFor('the HTTP gateway', 30_000, () => listening(gwPort));
      const httpTransport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${gwPort}/mcp`));
      const httpClient = new Client({ name: 'secrets-http-client', version: '1.0.0' });
      await httpClient.connect(httpTransport);
      await httpClient.callTool({ name: 'lookup', arguments: { key: `card ${CARD}` } });
      await fixtureViaMcp(httpClient);
      const httpTask = httpTransport.sessionId as string;
      await httpTransport.terminateSession();
      await httpClient.close();
      gw.child.kill('SIGTERM');
      await gw.exited;
      upstream.child.kill('SIGTERM');

      // Every path's calls arrive; the API answers hold no secret, and the five vault_read calls
      // with the same secret args are one args_hash.
      const view = (task: string, n: number) =>
        waitFor(`${n} calls of ${task}`, 60_000, async () => {
          const r = await fetch(`${url}/v1/tasks/${encodeURIComponent(task)}?limit=1000`, { headers: { authorization: `Bearer ${KEY}` } });
          const text = await r.text();
          const v = JSON.parse(text) as { invocations?: Array<{ tool_id: string; args_hash: string; redactions: unknown[] }> };
          return (v.invocations?.length ?? 0) >= n ? { text, v } : undefined;
        });
      const F = FIXTURE_CALLS;
      const views = await Promise.all([view(tasks.tsEdge, 2 + F), view(tasks.tsKafka, 2 + F), view(tasks.post, 1 + F), view(tasks.pyEdge, 1 + F), view(tasks.pyNet, 1 + F), view(tasks.otlp, 1 + F), view(stdioTask, 1 + F), view(httpTask, 1 + F), view(tasks.tsKafkaKeyed, 2 + F), view(tasks.kafkaRaw, F)]);
      const answers = views.map((x) => x.text);
      // An export of every call, and search hits with their excerpts.
      const exported = await fetch(`${url}/v1/export?kind=calls&from=${new Date(startedMs).toISOString()}`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(exported.status).toBe(200);
      const exportText = await exported.text();
      expect(exportText.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(10 * F);
      answers.push(exportText);
      for (const q of ['redacted', 'password', 'config', 'fixture']) answers.push(await (await fetch(`${url}/v1/search?q=${q}&limit=200`, { headers: { authorization: `Bearer ${KEY}` } })).text());
      const quarantine = await waitFor('three quarantined packets', 60_000, async () => {
        const text = await (await fetch(`${url}/v1/quarantine?limit=100`, { headers: { authorization: `Bearer ${KEY}` } })).text();
        return ((JSON.parse(text) as { records?: unknown[] }).records?.length ?? 0) >= 3 ? text : undefined;
      });
      answers.push(quarantine);
      // The packet topic: what the edge produced (HTTP packets, spans, the emitters and gateways
      // over HTTP: records with the request's id) holds no secret; what producers wrote to Kafka
      // themselves is theirs, and is read here too (the scan sees values in clear).
      // The emitter given the key over Kafka wrote none either; the plain one and the raw
      // producer wrote theirs in clear (ingest's safety net is tested on them).
      const records = (await readTopic(topic)).map((r) => ({ value: r.value, edge: 'x-request-id' in r.headers, raw: 'x-test-producer' in r.headers }));
      const ours = records.filter((r) => r.edge || r.value.includes(tasks.tsKafkaKeyed));
      expect(ours.length).toBeGreaterThanOrEqual(8 * F);
      for (const r of ours) for (const s of ALL_SECRETS) if (r.value.includes(s)) expect.fail(`a record tool-audit produced holds ${s}`);
      expect(records.filter((r) => r.raw && r.value.includes(AWS)).length).toBeGreaterThan(0);
      for (const a of answers) for (const s of ALL_SECRETS) if (a.includes(s)) expect.fail(`an API answer holds ${s}: ${a.slice(Math.max(0, a.indexOf(s) - 80), a.indexOf(s) + 40)}`);
      const vault = views.slice(0, 5).flatMap((x) => x.v.invocations ?? []).filter((c) => c.tool_id === 'vault_read');
      expect(vault).toHaveLength(5);
      expect(new Set(vault.map((c) => c.args_hash)).size).toBe(1);
      expect(vault.map((c) => (c.redactions as Array<{ pointer: string }>).filter((r) => r.pointer.startsWith("/args/")))).toEqual(Array.from({ length: 5 }, () => [{ pointer: "/args/dsn", rule: "url_password" }, { pointer: "/args/note", rule: "aws_access_key" }, { pointer: "/args/token", rule: "secret_name" }]));
    } finally {
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    }

    // What a reader of the store sees, table by table: no secret.
    const stored = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', join(root, 'test/helpers/stored-text-child.ts')], { cwd: root, env: { ...base, TOOL_AUDIT_DATA_DIR: dataDir }, encoding: 'utf8', maxBuffer: 256 << 20 })) as Record<string, string[]>;
    expect(stored['tool_invocations.args']?.length).toBeGreaterThanOrEqual(10);
    expect(stored['quarantine.raw']?.length).toBeGreaterThanOrEqual(3);
    for (const [column, values] of Object.entries(stored)) for (const s of ALL_SECRETS) expect(values.filter((v) => v.includes(s)), `${column} holds ${s}`).toEqual([]);
    // Nor any log line.
    for (const log of [serve.log(), ...gatewayLogs.map((l) => l())]) for (const s of ALL_SECRETS) if (log.includes(s)) expect.fail(`a log line holds ${s}`);
  }, 420_000);
});
