// An orchestrator as the packed-emitter test runs it: plain JavaScript in a project that has
// installed only the @tool-audit/emit tarball (plus kafkajs for the Kafka run). It wraps a
// tool, records some successes and a failure, closes the emitter and prints, as one JSON
// line, the call_ids it recorded and the emitter's counters.
// Usage: node emit-calls.mjs '{"instanceId": "...", "calls": 20, "sink": {"http": {...}} | {"kafka": {...}}}'
import { auditResult, createAuditEmitter } from '@tool-audit/emit';

const { instanceId, calls, sink } = JSON.parse(process.argv[2] ?? '{}');
const emitter = createAuditEmitter({ orchestrator: 'kernel', agentId: 'packed-agent', instanceId, ...sink, logger: console });
const callIds = [];

async function searchWeb(query) {
  return emitter.invoke('search_web', { query }, async (ctx) => {
    callIds.push(ctx.callId);
    return auditResult(`results for ${query}`, { costUsd: 0.001, tokensUsed: { input_tokens: 12 } });
  }, { taskId: `${instanceId}-task` });
}

for (let i = 0; i < calls; i++) {
  const value = await searchWeb(`query ${i}`);
  if (value !== `results for query ${i}`) throw new Error(`invoke changed the tool's value: ${value}`);
}
await emitter
  .invoke('fetch_page', { url: 'https://example.invalid' }, (ctx) => {
    callIds.push(ctx.callId);
    throw new Error('connection refused');
  })
  .then(
    () => {
      throw new Error('invoke swallowed the tool error');
    },
    (err) => {
      if (err.message !== 'connection refused') throw err;
    },
  );
await emitter.close(20_000);
console.log(JSON.stringify({ callIds, stats: emitter.stats() }));
