/**
 * Which spans are tool calls, and where each dialect of span attributes keeps a call's tool, its
 * id, its arguments and its result. Pure: reads a span's own attributes only.
 */
import type { AttrValue, OtlpSpan } from './otlp-decode.ts';

/** The tool fields of a recognised span. */
export interface ToolFields {
  tool: AttrValue | undefined;
  toolCallId: AttrValue | undefined;
  args: AttrValue | undefined;
  result: AttrValue | undefined;
}

/** Reads the tool fields of a recognised span, or undefined for any other span. */
export function toolFields(span: OtlpSpan): ToolFields | undefined {
  const a = span.attributes;
  if (a['gen_ai.operation.name'] === 'execute_tool') {
    return { tool: a['gen_ai.tool.name'], toolCallId: a['gen_ai.tool.call.id'], args: a['gen_ai.tool.call.arguments'], result: a['gen_ai.tool.call.result'] };
  }
  if (span.name === 'ai.toolCall' || a['ai.operationId'] === 'ai.toolCall') {
    return {
      tool: a['ai.toolCall.name'],
      toolCallId: a['ai.toolCall.id'],
      args: a['ai.toolCall.args'] ?? a['ai.toolCall.input'],
      result: a['ai.toolCall.result'] ?? a['ai.toolCall.output'],
    };
  }
  return undefined;
}

