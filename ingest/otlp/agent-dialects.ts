/**
 * Which spans are agent runs, and where each dialect keeps a run's agent and name. Pure: reads a
 * span's own attributes, name and whether it has a parent.
 *
 * | dialect | a run is | agent | name |
 * |---|---|---|---|
 * | OTel GenAI (gen_ai.*, 1.37) | `gen_ai.operation.name = invoke_agent` | `gen_ai.agent.name`, else `gen_ai.agent.id` | the span's name |
 * | OpenInference | `openinference.span.kind = AGENT`, or `CHAIN` with no parent (a trace's root: LangChain's, LangGraph's run) | `agent.name`, else the span's name | the span's name |
 * | OpenLLMetry | `traceloop.span.kind` `workflow` or `agent` | `gen_ai.agent.name`, else `traceloop.entity.name` | `traceloop.workflow.name`, else the span's name |
 * | Vercel AI SDK | `ai.generateText`, `ai.streamText`, `ai.generateObject`, `ai.streamObject` | `ai.telemetry.functionId` | the function id, else the span's name |
 *
 * Every dialect: where none of these name the agent, the resource's `service.name` does.
 */
import type { AttrValue, OtlpSpan } from './otlp-decode.ts';

/** The run fields of a recognised agent span. */
export interface RunFields {
  /** The agent's name as the dialect gives it (undefined: the mapper falls back to the service). */
  agent: AttrValue | undefined;
  name: string;
}

/**
 * The attributes {@link runFields} recognises an agent span by, and the AI SDK's span-name prefix:
 * a span with none of them is no agent run.
 */
export const RUN_SPAN_MARKERS = { keys: ['openinference.span.kind', 'gen_ai.operation.name', 'traceloop.span.kind', 'ai.operationId'], namePrefixes: ['ai.'] } as const;

const AI_SDK_RUNS = new Set(['ai.generateText', 'ai.streamText', 'ai.generateObject', 'ai.streamObject']);
const OPENLLMETRY_RUNS = new Set(['workflow', 'agent']);

/** Reads the run fields of an agent span, or undefined for any other span. */
export function runFields(span: OtlpSpan): RunFields | undefined {
  const a = span.attributes;
  // OpenLLMetry first: its workflow spans carry gen_ai.operation.name = invoke_agent too, and its
  // own names say more (the workflow's name rather than `<name>.workflow`).
  const traceloop = a['traceloop.span.kind'];
  if (typeof traceloop === 'string' && OPENLLMETRY_RUNS.has(traceloop)) {
    return { agent: named(a['gen_ai.agent.name']) ?? a['traceloop.entity.name'], name: named(a['traceloop.workflow.name']) ?? span.name };
  }
  if (a['gen_ai.operation.name'] === 'invoke_agent') return { agent: named(a['gen_ai.agent.name']) ?? a['gen_ai.agent.id'], name: span.name };
  const kind = a['openinference.span.kind'];
  if (kind === 'AGENT' || (kind === 'CHAIN' && span.parentSpanId === undefined)) return { agent: named(a['agent.name']) ?? span.name, name: span.name };
  const op = a['ai.operationId'] ?? span.name;
  if (typeof op === 'string' && AI_SDK_RUNS.has(op)) {
    const fn = named(a['ai.telemetry.functionId']);
    return { agent: fn, name: fn ?? span.name };
  }
  return undefined;
}

function named(v: AttrValue | undefined): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
