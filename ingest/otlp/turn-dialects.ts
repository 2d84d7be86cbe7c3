/**
 * Which spans are model turns, and where each dialect keeps a turn's model, provider, tokens, cost
 * and the tool calls the model asked for. Pure: reads a span's own attributes only.
 *
 * | dialect | a turn is | model | provider | tokens in / out / cached in | cost | tool calls asked for |
 * |---|---|---|---|---|---|---|
 * | OTel GenAI (gen_ai.*, 1.37) | `gen_ai.operation.name` `chat`, `text_completion`, `generate_content` | `gen_ai.response.model`, else `gen_ai.request.model` | `gen_ai.provider.name`, else `gen_ai.system` | `gen_ai.usage.input_tokens` / `output_tokens` / `cache_read.input_tokens` | — | `gen_ai.output.messages`: parts of type `tool_call` (`id`, `name`) |
 * | OpenInference | `openinference.span.kind = LLM` | `llm.model_name` | `llm.provider`, else `llm.system` | `llm.token_count.prompt` / `completion` / `prompt_details.cache_read` | `llm.cost.total` | `llm.output_messages.<i>.message.tool_calls.<j>.tool_call.id` / `.function.name` |
 * | OpenLLMetry | `llm.request.type` `chat` or `completion` | as GenAI | `gen_ai.system` | `gen_ai.usage.input_tokens` (or `prompt_tokens`) / `output_tokens` (or `completion_tokens`) / `cache_read_input_tokens` | — | `gen_ai.completion.<i>.tool_calls.<j>.id` / `.name` |
 * | Vercel AI SDK | `ai.generateText.doGenerate`, `ai.streamText.doStream`, `ai.generateObject.doGenerate`, `ai.streamObject.doStream` | `ai.response.model`, else `ai.model.id` | `ai.model.provider` | `ai.usage.inputTokens` (or `promptTokens`) / `outputTokens` (or `completionTokens`) / `cachedInputTokens` | — | `ai.response.toolCalls` (`toolCallId`, `toolName`) |
 *
 * Every dialect: `tool_audit.cost_usd` is the cost the producer reports, read first. With
 * OTLP_TURN_MESSAGES=on, {@link messagesOf} collects the dialect's message attributes (GenAI's
 * `gen_ai.*messages*`, OpenInference's `llm.input_messages.*`/`llm.output_messages.*`,
 * OpenLLMetry's `gen_ai.prompt.*`/`gen_ai.completion.*`, the AI SDK's `ai.prompt*`/`ai.response.*`).
 */
import type { JsonValue } from '../../schemas/canonical-json.ts';
import type { AttrValue, OtlpSpan } from './otlp-decode.ts';

/** The turn fields of a recognised model span. */
export interface TurnFields {
  /** Its dialect's message attributes, as their names (exact, or a prefix ending in `.`). */
  messageKeys: readonly string[];
  model: AttrValue | undefined;
  provider: AttrValue | undefined;
  inputTokens: AttrValue | undefined;
  outputTokens: AttrValue | undefined;
  cachedInputTokens: AttrValue | undefined;
  cost: AttrValue | undefined;
  /** The tool calls the model asked for, in its order. */
  toolCalls: Array<{ id: string | null; tool: string }>;
}

/**
 * The attributes {@link turnFields} recognises a model span by, and the span-name prefix (the AI
 * SDK's `ai.generateText.doGenerate` …): a span with none of them is no model span.
 */
export const TURN_SPAN_MARKERS = { keys: ['openinference.span.kind', 'gen_ai.operation.name', 'llm.request.type', 'ai.operationId'], namePrefixes: ['ai.'] } as const;

const GENAI_TURNS = new Set(['chat', 'text_completion', 'generate_content']);
// Where each dialect keeps the text of a turn's messages (a name ending in '.' is a prefix of flattened attributes).
const GENAI_MESSAGES = ['gen_ai.system_instructions', 'gen_ai.input.messages', 'gen_ai.output.messages'];
const OPENINFERENCE_MESSAGES = ['llm.input_messages.', 'llm.output_messages.'];
const OPENLLMETRY_MESSAGES = ['gen_ai.prompt.', 'gen_ai.completion.', ...GENAI_MESSAGES];
const AI_SDK_MESSAGES = ['ai.prompt', 'ai.prompt.messages', 'ai.response.text', 'ai.response.toolCalls', 'ai.response.object'];

/**
 * The span's message attributes as one JSON object (name → value as sent), or null when it has
 * none. What `OTLP_TURN_MESSAGES=on` stores with a turn.
 */
export function messagesOf(a: Record<string, AttrValue>, keys: readonly string[]): string | null {
  const out: Record<string, AttrValue> = {};
  let any = false;
  for (const k in a) {
    if (keys.some((m) => (m.endsWith('.') ? k.startsWith(m) : k === m))) {
      out[k] = a[k] as AttrValue;
      any = true;
    }
  }
  return any ? JSON.stringify(out) : null;
}
const AI_SDK_TURNS = new Set(['ai.generateText.doGenerate', 'ai.streamText.doStream', 'ai.generateObject.doGenerate', 'ai.streamObject.doStream']);

/** Reads the turn fields of a model span, or undefined for any other span. */
export function turnFields(span: OtlpSpan): TurnFields | undefined {
  const a = span.attributes;
  const reported = a['tool_audit.cost_usd'];
  if (a['openinference.span.kind'] === 'LLM') {
    return {
      messageKeys: OPENINFERENCE_MESSAGES,
      model: a['llm.model_name'],
      provider: a['llm.provider'] ?? a['llm.system'],
      inputTokens: a['llm.token_count.prompt'],
      outputTokens: a['llm.token_count.completion'],
      cachedInputTokens: a['llm.token_count.prompt_details.cache_read'],
      cost: reported ?? a['llm.cost.total'],
      toolCalls: flattenedCalls(a, 'llm.output_messages.', /^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.(id|function\.name)$/, 'function.name'),
    };
  }
  const op = a['gen_ai.operation.name'];
  const openllmetry = a['llm.request.type'] === 'chat' || a['llm.request.type'] === 'completion';
  if ((typeof op === 'string' && GENAI_TURNS.has(op)) || openllmetry) {
    const genai = genaiCalls(a['gen_ai.output.messages']);
    return {
      messageKeys: openllmetry ? OPENLLMETRY_MESSAGES : GENAI_MESSAGES,
      model: a['gen_ai.response.model'] ?? a['gen_ai.request.model'],
      provider: a['gen_ai.provider.name'] ?? a['gen_ai.system'],
      inputTokens: a['gen_ai.usage.input_tokens'] ?? a['gen_ai.usage.prompt_tokens'],
      outputTokens: a['gen_ai.usage.output_tokens'] ?? a['gen_ai.usage.completion_tokens'],
      cachedInputTokens: a['gen_ai.usage.cache_read.input_tokens'] ?? a['gen_ai.usage.cache_read_input_tokens'],
      cost: reported,
      toolCalls: genai.length ? genai : flattenedCalls(a, 'gen_ai.completion.', /^gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(id|name)$/, 'name'),
    };
  }
  const op2 = a['ai.operationId'] ?? span.name;
  if (typeof op2 === 'string' && AI_SDK_TURNS.has(op2)) {
    return {
      messageKeys: AI_SDK_MESSAGES,
      model: a['ai.response.model'] ?? a['ai.model.id'],
      provider: a['ai.model.provider'],
      inputTokens: a['ai.usage.inputTokens'] ?? a['ai.usage.promptTokens'],
      outputTokens: a['ai.usage.outputTokens'] ?? a['ai.usage.completionTokens'],
      cachedInputTokens: a['ai.usage.cachedInputTokens'],
      cost: reported,
      toolCalls: aiSdkCalls(a['ai.response.toolCalls']),
    };
  }
  return undefined;
}

type Obj = { [k: string]: JsonValue };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * A JSON array held as text (or as an OTLP array value). Plain JSON.parse: only ids and names are
 * read from it, and it is parsed for every model span (the lossless reader costs ~3× as much).
 */
function jsonArray(v: AttrValue | undefined): JsonValue[] {
  let parsed: unknown = v;
  if (typeof v === 'string') {
    try {
      parsed = JSON.parse(v);
    } catch {
      return [];
    }
  }
  return Array.isArray(parsed) ? (parsed as JsonValue[]) : [];
}

/** GenAI output messages: each part of type tool_call, in order. */
function genaiCalls(v: AttrValue | undefined): TurnFields['toolCalls'] {
  const out: TurnFields['toolCalls'] = [];
  // Most turns answer in text: a text naming no tool_call (not even through a \u escape) has none,
  // and is not parsed.
  if (typeof v === 'string' && !v.includes('tool_call') && !v.includes('\\u')) return out;
  for (const m of jsonArray(v)) {
    if (!isObj(m) || !Array.isArray(m.parts)) continue;
    for (const p of m.parts) if (isObj(p) && p.type === 'tool_call' && text(p.name)) out.push({ id: text(p.id), tool: p.name as string });
  }
  return out;
}

/** The AI SDK's response tool calls: [{toolCallId, toolName, …}]. */
function aiSdkCalls(v: AttrValue | undefined): TurnFields['toolCalls'] {
  return jsonArray(v).flatMap((c) => (isObj(c) && text(c.toolName) ? [{ id: text(c.toolCallId), tool: c.toolName as string }] : []));
}

/**
 * Tool calls written as flattened attributes (`….<i>….<j>.id`, `….<i>….<j>.<name key>`), in the
 * order of their message and position.
 */
function flattenedCalls(a: Record<string, AttrValue>, prefix: string, re: RegExp, nameKey: string): TurnFields['toolCalls'] {
  const byPlace = new Map<string, { i: number; j: number; id: string | null; tool: string | null }>();
  for (const k in a) {
    // The prefix first: the pattern runs only on the keys it could match.
    if (!k.startsWith(prefix)) continue;
    const v = a[k];
    const m = re.exec(k);
    if (!m) continue;
    const place = `${m[1]}.${m[2]}`;
    const e = byPlace.get(place) ?? { i: Number(m[1]), j: Number(m[2]), id: null, tool: null };
    if (m[3] === nameKey) e.tool = text(v);
    else e.id = text(v);
    byPlace.set(place, e);
  }
  return [...byPlace.values()]
    .filter((e): e is typeof e & { tool: string } => e.tool !== null)
    .sort((x, y) => x.i - y.i || x.j - y.j)
    .map((e) => ({ id: e.id, tool: e.tool }));
}
