/**
 * The HTTP read client is the route table read backwards: for every route, the request the
 * client sends, validated and run by the server side of the same route, calls the same query
 * method with the same parameters.
 */
import { describe, expect, it } from 'vitest';
import { createHttpReadQueries } from '../../../api/read-client.ts';
import { READ_ROUTES } from '../../../api/read-route-table.ts';
import type { ReadDefaults } from '../../../api/read-params.ts';
import type { ReadQueries } from '../../../queries/index.ts';

const window = { fromMs: Date.UTC(2026, 10, 1), toMs: Date.UTC(2026, 10, 2, 3, 4, 5, 6) };
const page = { window, limit: 7, cursor: 'abc_-' };
const SAMPLES: Record<keyof ReadQueries, object> = {
  tools: { window, limit: 5 },
  toolSeries: { window, bucketS: 900 },
  tasks: { window, limit: 4 },
  toolStats: { toolId: 'search/web é', window, limit: 3 },
  toolInvocations: { toolId: 'search_web', ...page },
  toolOutputs: { toolId: 'a b', ...page },
  outputContent: { outputId: '3b241101-e2bb-4255-8caf-4136c566a962', maxBytes: 4096 },
  callProof: { callId: '3b241101-e2bb-4255-8caf-4136c566a962' },
  outputProof: { outputId: '4b241101-e2bb-4255-8caf-4136c566a962' },
  turnProof: { turnId: '5b241101-e2bb-4255-8caf-4136c566a962' },
  runProof: { runId: '5b241101-e2bb-4255-8caf-4136c566a963' },
  logHeads: { fromSize: 3, toSize: 99, limit: 10 },
  logConsistency: { fromSize: 5, toSize: 50 },
  agentTools: { agentId: 'QA_Agent', ...page },
  task: { taskId: 'task 1/2', ...page },
  expensive: { thresholdUsd: 0.25, ...page },
  slow: { thresholdMs: 1500, ...page },
  failed: { ...page },
  dedup: { minCount: 3, ...page },
  identicalOutputs: { minCount: 2, toolId: 'fetch_url', ...page },
  sequences: { length: 4, minCount: 2, ...page },
  violations: { invariant: 'I8', toolId: 'fetch_url', ...page },
  search: { q: 'passwd "say \\"hi\\"" café', toolId: 'fetch_url', agentId: 'QA', status: 'error', taskId: 't 1', orchestrator: 'kernel', field: 'content', ...page },
  quarantine: { reason: 'I5_args_hash', source: 'kafka:tool_audit.packets/3', packetType: 'tool_call', ...page },
  quarantineRecord: { quarantineId: 'http:req-1/x#3' },
  budgets: {},
  budgetDecisions: { decision: 'deny', ...page },
  manifest: {},
  manifestHistory: { toolId: 'recipe search/é' },
  mcpServers: {},
  cacheSimulation: { window, toolId: 'search_web', ttlMs: 300_000 },
  ttlCurve: { toolId: 'fetch_url', window },
  hints: { kind: 'retry_storm', ...page },
  modelCost: { window, limit: 9 },
};
const DEFAULTS: ReadDefaults = { windowDays: 7, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 };

describe('HTTP read client', () => {
  it('offers every method of ReadQueries, one route each', () => {
    expect(READ_ROUTES.map((r) => r.method).sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  it.each(READ_ROUTES.map((r) => [r.method, r] as const))('%s: the server side of the route calls the same method with the same parameters', async (method, route) => {
    let sent: URL | undefined;
    const fakeFetch = (async (url: string) => {
      sent = new URL(url);
      return new Response('{}', { status: 500 });
    }) as typeof fetch;
    const client = createHttpReadQueries({ url: 'http://server.test/', fetch: fakeFetch });
    await expect((client[method] as (p: object) => Promise<unknown>)(SAMPLES[method])).rejects.toMatchObject({ code: 'SERVER_UNAVAILABLE', retryable: true });
    // The server: match the path against the route, validate, run on recording queries.
    const pattern = new RegExp(`^${route.url.replace(/:([a-z_]+)/g, '(?<$1>[^/]+)')}$`);
    const match = pattern.exec((sent as URL).pathname);
    expect(match, (sent as URL).pathname).not.toBeNull();
    const params = Object.fromEntries(Object.entries(match?.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
    const parsedParams = route.params ? route.params.parse(params) : {};
    const parsedQuery = route.query.parse(Object.fromEntries((sent as URL).searchParams));
    let got: unknown;
    const recorder = new Proxy({}, { get: (_t, name) => async (p: unknown) => ((got = { name, p }), {}) }) as ReadQueries;
    await route.run(recorder, { params: parsedParams as Record<string, string>, query: parsedQuery }, DEFAULTS);
    expect(got).toEqual({ name: method, p: SAMPLES[method] });
  });
});
