/**
 * `npm run bench:redaction-fp`: how many ordinary calls the redaction changes. The project's own
 * workloads — the ingest benchmark's (`bench/ingest/ingest-workload.ts`: searches, fetches with headers,
 * code, charts, model calls with `max_tokens`), the read API tests' (`test/helpers/read-workload.ts`:
 * agents' tasks with SQL, paths, quotes and non-ASCII) and the ingest tests' mixed stream — hold no
 * secret; each is redacted as ingest redacts it, with the default policy, and every call or output
 * whose args, summary, error or content came out changed is a false positive, counted by rule.
 *
 *   npm run bench:redaction-fp -- [--tool-calls 100000]
 *
 * Target: ≤ 1 % of calls.
 */
import { parseArgs } from 'node:util';
import { placeholdersIn, Redactor } from '../../schemas/redaction-policy.ts';
import { generateWorkload } from '../../test/helpers/read-workload.ts';
import { mixedStream } from '../../test/helpers/workload.ts';
import { workload } from './ingest-workload.ts';

const { values: opt } = parseArgs({ options: { 'tool-calls': { type: 'string', default: '100000' } } });
const N = Number(opt['tool-calls']);
if (!(Number.isInteger(N) && N > 0)) throw new Error(`--tool-calls must be a whole number > 0; got ${opt['tool-calls']}`);

const redactor = new Redactor({ key: 'bench-redaction-key-0123456789' });
let calls = 0;
let outputs = 0;
let changedCalls = 0;
let changedOutputs = 0;
const byRule = new Map<string, number>();
const examples: string[] = [];
const count = (value: unknown, at: string) => {
  for (const r of placeholdersIn(value, at)) byRule.set(r.rule, (byRule.get(r.rule) ?? 0) + 1);
};

/** Every packet judged: the ingest workload's N calls, 40 read-test workloads, N / 10 of the mixed stream. */
function* packets(): Generator<string> {
  for (const m of workload({ toolCalls: N, redeliveryRate: 0, invalidRate: 0, reuseRate: 0 })) yield m.value;
  for (let seed = 1; seed <= 40; seed++) for (const p of generateWorkload(seed, Date.UTC(2026, 10, 1)).packets) yield JSON.stringify(p);
  for (const m of mixedStream(Math.ceil(N / 10))) if (m.expect !== 'quarantine') yield m.value;
}

for (const value of packets()) {
  const p = JSON.parse(value) as { type: string; invocation?: { tool_id: string; args: unknown; result_summary: unknown; error?: string | null }; content?: string };
  if (p.type === 'tool_call' && p.invocation) {
    calls++;
    const inv = p.invocation;
    const r = redactor.call(inv.tool_id, { args: inv.args, result_summary: inv.result_summary });
    const error = typeof inv.error === 'string' ? redactor.text(inv.error) : inv.error;
    if (r.changed || error !== inv.error) {
      changedCalls++;
      count({ args: r.args, result_summary: r.result_summary, error }, '');
      if (examples.length < 5) examples.push(JSON.stringify({ tool: inv.tool_id, args: inv.args }).slice(0, 200));
    }
  } else if (p.type === 'output_artifact' && typeof p.content === 'string') {
    outputs++;
    const r = redactor.text(p.content);
    if (r !== p.content) {
      changedOutputs++;
      count(r, '/content');
    }
  }
}

const pct = (a: number, b: number) => (b === 0 ? 0 : (100 * a) / b);
process.stdout.write(
  [
    `bench:redaction-fp — ${calls.toLocaleString('en')} calls, ${outputs.toLocaleString('en')} outputs of the project's workloads (ingest bench, read tests, mixed stream), no secret planted`,
    `calls changed: ${changedCalls} (${pct(changedCalls, calls).toFixed(3)} %; target ≤ 1 %)`,
    `outputs changed: ${changedOutputs} (${pct(changedOutputs, outputs).toFixed(3)} %)`,
    `by rule: ${[...byRule].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`,
    ...examples.map((e) => `  e.g. ${e}`),
    '',
  ].join('\n'),
);
