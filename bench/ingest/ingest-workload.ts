/**
 * A realistic packet stream for the ingest benchmark, in the mix the demo describes (SPEC §7):
 * tasks that chain search → fetch → python → chart (with a summarise step now and then), several
 * agents and orchestrators, failures of every status, costs and token counts (a few expensive
 * calls), repeated identical calls, non-ASCII and astral args, and an output_artifact for most
 * successful calls (json, html, text, csv, code, chart ids). A small share of the stream is what
 * real producers also send: identical redeliveries, packets that break a MUST rule, and a
 * different packet reusing a call_id (I1). Deterministic for a seed; expectations are counted
 * while generating.
 */
import { canonicalArgs, type JsonValue } from '../../schemas/canonical-json.ts';
import { contentSample, sha256Hex, utf8ByteLength } from '../../schemas/hashing.ts';
import { rng } from '../../test/helpers/rng.ts';

export { rng } from '../../test/helpers/rng.ts';

/** One Kafka message. */
export interface WorkloadMessage {
  key: string;
  value: string;
  /**
   * What the packet is to the ingest: `valid` (stored once), a `redelivery` of a valid one, `invalid`
   * (breaks a MUST rule) or `reused` (another packet's call_id). The reject topic
   * (bench/ingest/ingest-rejects.ts) picks its I1 reuses among the `valid` ones. Not sent to Kafka.
   */
  role: 'valid' | 'redelivery' | 'invalid' | 'reused';
}

/** What the stream holds, counted while generating. */
export interface WorkloadCounts {
  messages: number;
  bytes: number;
  toolCalls: number;
  outputs: number;
  /** Identical copies of valid packets (must not make a second row). */
  redeliveries: number;
  /** Packets that break a per-packet MUST rule (quarantined). */
  invalid: number;
  /** Different packets reusing a stored call_id (quarantined, I1). */
  reusedCallIds: number;
  /** Rows the segments must hold at the end. */
  expect: { invocations: number; outputs: number; quarantine: number };
}

/** Generation knobs; the defaults are the benchmark's mix. */
export interface WorkloadOptions {
  /** tool_call packets to generate (redeliveries and invalid ones included). */
  toolCalls: number;
  seed?: number;
  /** Share of valid packets sent twice. */
  redeliveryRate?: number;
  /** Share of tool_calls that break a MUST rule. */
  invalidRate?: number;
  /** Share of tool_calls that reuse an earlier call_id with different content. */
  reuseRate?: number;
  /** created_at of the first call; the stream covers about a day after it. */
  startMs?: number;
}

const HEX = '0123456789abcdef';

const AGENTS = ['L', 'QA_Agent', 'Researcher', 'Analyst', 'Planner', 'Coder'];
const ORCHESTRATORS = ['gateway', 'websocket', 'kernel', 'scheduler'] as const;
const TOPICS = [
  'quarterly revenue 2026',
  'données trimestrielles du chiffre d’affaires',
  'Umsatz Q3 — Übersicht nach Region',
  '株価 推移 2026年',
  'прогноз спроса на электромобили',
  'crecimiento del PIB en América Latina',
  'AI chip export controls',
  'customer churn drivers 📉',
  'solar capacity additions by country',
  'open-source LLM licences',
  'median rent Zürich vs. Genève',
  'supply-chain delays 🚢 Q2',
];
const DOMAINS = ['reuters.com', 'ft.com', 'statista.com', 'arxiv.org', 'destatis.de', 'insee.fr', 'nikkei.com', 'worldbank.org'];
const ERRORS: Record<string, string[]> = {
  timeout: ['timed out after 30000 ms', 'deadline exceeded while reading response body'],
  error: ['HTTP 502 Bad Gateway', 'ConnectionResetError: [Errno 104] Connection reset by peer', "KeyError: 'revenue'", 'ValueError: could not convert string to float: \'n/a\''],
  rate_limited: ['429 Too Many Requests (retry after 12 s)', 'quota exceeded for search API'],
  invalid_input: ['url must be absolute', "unsupported chart kind 'pie3d'"],
};

interface Call {
  callId: string;
  tool: string;
  args: Record<string, JsonValue>;
  status: 'success' | 'timeout' | 'error' | 'rate_limited' | 'invalid_input';
  durationMs: number;
  cost: number | null;
  tokens: Record<string, number> | null;
  summary: Record<string, JsonValue>;
  content?: { type: string; text: string };
}

/** Fresh counters for {@link workload}. */
export function emptyCounts(): WorkloadCounts {
  return {
    messages: 0,
    bytes: 0,
    toolCalls: 0,
    outputs: 0,
    redeliveries: 0,
    invalid: 0,
    reusedCallIds: 0,
    expect: { invocations: 0, outputs: 0, quarantine: 0 },
  };
}

/** The stream, in production order; `counts` is updated as messages are yielded. */
export function* workload(opts: WorkloadOptions, counts: WorkloadCounts = emptyCounts()): Generator<WorkloadMessage, WorkloadCounts> {
  const r = rng(opts.seed ?? 7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const uuid = () => {
    let s = '';
    for (let i = 0; i < 32; i++) {
      if (i === 8 || i === 12 || i === 16 || i === 20) s += '-';
      s += i === 12 ? '4' : i === 16 ? HEX[8 + int(0, 3)] : HEX[int(0, 15)];
    }
    return s;
  };
  const logNormal = (median: number, sigma: number) => Math.max(1, Math.round(median * Math.exp(sigma * gauss())));
  const gauss = () => {
    let u = 0;
    while (u === 0) u = r();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
  };
  const redeliveryRate = opts.redeliveryRate ?? 0.002;
  const invalidRate = opts.invalidRate ?? 0.0005;
  const reuseRate = opts.reuseRate ?? 0.0002;

  const pending: WorkloadMessage[] = [];
  const send = (key: string, value: string, role: WorkloadMessage['role']) => {
    counts.messages++;
    counts.bytes += utf8ByteLength(value);
    pending.push({ key, value, role });
  };
  const sendValid = (key: string, value: string) => {
    send(key, value, 'valid');
    if (r() < redeliveryRate) {
      counts.redeliveries++;
      send(key, value, 'redelivery');
    }
  };

  let now = opts.startMs ?? Date.now() - 26 * 3600_000;
  const recentSearches: Array<Record<string, JsonValue>> = [];
  const storedCallIds: string[] = [];
  let task = 0;

  while (counts.toolCalls < opts.toolCalls) {
    task++;
    const taskId = `task-${(opts.seed ?? 7).toString(36)}-${task.toString(36).padStart(6, '0')}`;
    const agent = pick(AGENTS);
    const orchestrator = pick(ORCHESTRATORS);
    const instance = `${orchestrator}-${int(1, 4)}`;
    const topic = pick(TOPICS);
    let t = (now += int(5, 90));
    const chain = planTask();
    for (const step of chain) {
      if (counts.toolCalls >= opts.toolCalls) break;
      const call = makeCall(step, topic, taskId);
      t += call.durationMs + int(1, 400);
      counts.toolCalls++;
      const createdAt = new Date(t).toISOString();
      const invocation: Record<string, JsonValue> = {
        call_id: call.callId,
        task_id: taskId,
        tool_id: call.tool,
        agent_id: agent,
        orchestrator,
        instance_id: instance,
        args: call.args,
        args_hash: sha256Hex(canonicalArgs(call.args)),
        status: call.status,
        duration_ms: call.durationMs,
        result_summary: call.summary,
        error: call.status === 'success' ? null : pick(ERRORS[call.status] as string[]),
        cost_usd: call.cost,
        tokens_used: call.tokens,
        created_at: createdAt,
      };
      const roll = r();
      if (roll < invalidRate) {
        counts.invalid++;
        counts.expect.quarantine++;
        send(taskId, invalidToolCall(invocation, counts.invalid), 'invalid');
        continue;
      }
      if (roll < invalidRate + reuseRate && storedCallIds.length > 100) {
        // A different packet under a call_id that is already stored: one row stays, this is quarantined.
        const reused = storedCallIds[int(0, storedCallIds.length - 1)] as string;
        counts.reusedCallIds++;
        counts.expect.quarantine++;
        send(taskId, JSON.stringify({ type: 'tool_call', call_id: reused, invocation: { ...invocation, call_id: reused } }), 'reused');
        continue;
      }
      counts.expect.invocations++;
      if (storedCallIds.length < 50_000) storedCallIds.push(call.callId);
      else storedCallIds[int(0, storedCallIds.length - 1)] = call.callId;
      sendValid(taskId, JSON.stringify({ type: 'tool_call', call_id: call.callId, invocation }));
      if (call.status === 'success' && call.content) {
        const c = call.content;
        const output = {
          output_id: uuid(),
          call_id: call.callId,
          tool_id: call.tool,
          content_type: c.type,
          content_hash: sha256Hex(c.text),
          size_bytes: utf8ByteLength(c.text),
          sample: contentSample(c.text),
          created_at: createdAt,
        };
        // JSON content goes in as the value itself half of the time (hashed as compact JSON).
        const content = c.type === 'json' && r() < 0.5 ? c.text : JSON.stringify(c.text);
        counts.outputs++;
        counts.expect.outputs++;
        sendValid(taskId, `{"type":"output_artifact","output":${JSON.stringify(output)},"content":${content}}`);
      }
    }
    yield* pending;
    pending.length = 0;
  }
  return counts;

  function planTask(): string[] {
    const steps = ['search_web'];
    for (let i = int(1, 3); i > 0; i--) steps.push('fetch_url');
    steps.push('python_execute');
    if (r() < 0.3) steps.push('python_execute');
    steps.push('create_chart');
    if (r() < 0.35) steps.push('summarize');
    return steps;
  }

  function makeCall(tool: string, topic: string, taskId: string): Call {
    const callId = uuid();
    const roll = r();
    const status: Call['status'] =
      roll < 0.92 ? 'success' : roll < 0.95 ? 'timeout' : roll < 0.975 ? 'error' : roll < 0.992 ? 'rate_limited' : 'invalid_input';
    const ok = status === 'success';
    switch (tool) {
      case 'search_web': {
        let args: Record<string, JsonValue>;
        if (recentSearches.length > 20 && r() < 0.04) {
          args = pick(recentSearches); // the same search again: a dedup candidate
        } else {
          args = { query: `${topic} ${int(1, 500)}`, top_k: pick([5, 10, 20]), lang: pick(['en', 'fr', 'de', 'ja', 'es']), safe: r() < 0.9 };
          if (recentSearches.length < 200) recentSearches.push(args);
          else recentSearches[int(0, 199)] = args;
        }
        const n = ok ? int(3, 8) : 0;
        const results = Array.from({ length: n }, (_, i) => ({
          title: `${topic} — result ${i + 1}`,
          url: `https://www.${pick(DOMAINS)}/${taskId}/${i}`,
          score: Math.round(r() * 1000) / 1000,
        }));
        return {
          callId,
          tool,
          args,
          status,
          durationMs: ok ? logNormal(450, 0.5) : status === 'timeout' ? 30_000 : logNormal(200, 0.8),
          cost: 0.005,
          tokens: null,
          summary: { result_count: n, urls_returned: n },
          ...(ok ? { content: { type: 'json', text: JSON.stringify({ query: args.query, results }) } } : {}),
        };
      }
      case 'fetch_url': {
        const url = `https://www.${pick(DOMAINS)}/articles/${int(10_000, 99_999)}?lang=${pick(['en', 'fr', 'de'])}`;
        const paragraphs = int(2, 6);
        const body = Array.from({ length: paragraphs }, (_, i) => `<p>${topic}: paragraph ${i} with figures ${int(10, 9999)} and ${int(1, 99)}% growth.</p>`).join('\n');
        const html = `<!doctype html><html><head><title>${topic}</title></head><body><h1>${topic}</h1>\n${body}\n</body></html>`;
        return {
          callId,
          tool,
          args: { url, timeout_s: 30, headers: { 'accept-language': 'en;q=0.8, fr;q=0.6', 'user-agent': 'tool-audit-agent/1.0' } },
          status,
          durationMs: ok ? logNormal(900, 0.7) : status === 'timeout' ? 30_000 : logNormal(300, 0.8),
          cost: null,
          tokens: null,
          summary: ok ? { status_code: 200, bytes: utf8ByteLength(html) } : { status_code: status === 'rate_limited' ? 429 : 502 },
          ...(ok ? { content: { type: 'html', text: html } } : {}),
        };
      }
      case 'python_execute': {
        const code = `import pandas as pd\ndf = pd.read_json("${taskId}.json")\nprint(df.groupby("region")["revenue"].sum().round(${int(0, 3)}))\n# ${topic}\n`;
        const rows = int(3, 8);
        const csv = ['region,revenue,growth_pct', ...Array.from({ length: rows }, (_, i) => `R${i},${int(1000, 99_999)},${(r() * 20 - 5).toFixed(2)}`)].join('\n');
        const asCode = r() < 0.2;
        return {
          callId,
          tool,
          args: { code, timeout_s: 60, packages: ['pandas', 'numpy'] },
          status,
          durationMs: ok ? logNormal(1800, 0.6) : status === 'timeout' ? 60_000 : logNormal(700, 0.6),
          cost: Math.round(r() * 300) / 100_000,
          tokens: null,
          summary: { exit_code: ok ? 0 : 1, stdout_lines: ok ? rows + 1 : 0 },
          ...(ok ? { content: asCode ? { type: 'code', text: code } : { type: r() < 0.5 ? 'csv' : 'text', text: csv } } : {}),
        };
      }
      case 'create_chart': {
        const points = int(4, 16);
        return {
          callId,
          tool,
          args: { kind: pick(['line', 'bar', 'area']), title: topic, series: Array.from({ length: points }, () => Math.round(r() * 10_000) / 100), y_label: 'USD (Mio.)' },
          status,
          durationMs: ok ? logNormal(350, 0.4) : logNormal(150, 0.5),
          cost: null,
          tokens: null,
          summary: { points, format: 'png' },
          ...(ok ? { content: { type: 'chart_id', text: `chart-${callId.slice(0, 8)}` } } : {}),
        };
      }
      default: {
        // An LLM summarisation: tokens and cost; now and then an expensive one (> $1).
        const input = int(800, 12_000) * (r() < 0.03 ? 12 : 1);
        const output = int(120, 1200);
        const text = `Summary (${topic}): revenue grew ${int(1, 30)}% year over year; risks: ${pick(['currency', 'supply', 'regulation', 'demand'])}. ✅`;
        return {
          callId,
          tool,
          args: { model: pick(['gpt-4.1', 'claude-sonnet', 'mistral-large']), max_tokens: 1024, prompt: `Summarise the findings about «${topic}» for the board.` },
          status,
          durationMs: ok ? logNormal(4000, 0.5) : status === 'timeout' ? 120_000 : logNormal(900, 0.5),
          cost: Math.round(((input * 3 + output * 15) / 1_000_000) * 10_000) / 10_000,
          tokens: { input_tokens: input, output_tokens: output },
          summary: { finish_reason: ok ? 'stop' : 'error', output_tokens: ok ? output : 0 },
          ...(ok ? { content: { type: 'text', text } } : {}),
        };
      }
    }
  }

  function invalidToolCall(inv: Record<string, JsonValue>, n: number): string {
    switch (n % 5) {
      case 0:
        return `{"type": "tool_call", "call_id": "${inv.call_id as string}", "invocation": {"tool_id": broken`;
      case 1:
        return JSON.stringify({ type: 'tool_call', call_id: inv.call_id, invocation: { ...inv, status: 'done' } });
      case 2:
        return JSON.stringify({ type: 'tool_call', call_id: inv.call_id, invocation: { ...inv, args_hash: sha256Hex(`wrong ${n}`) } });
      case 3:
        return JSON.stringify({ type: 'tool_call', call_id: inv.call_id, invocation: { ...inv, status: 'success', error: 'oops' } });
      default:
        return JSON.stringify({ type: 'tool_call', call_id: inv.call_id, invocation: { ...inv, retries: 2 } });
    }
  }
}
