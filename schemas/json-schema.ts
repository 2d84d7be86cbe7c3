/**
 * JSON Schema documents generated from the zod contracts, for emitters in other languages, and
 * the packet schemas of the OpenAPI document. Checked in under schemas/json/; a unit test fails
 * when they are stale.
 *
 * The zod schemas judge packets at ingest, where some MUST rules are checked after the schema so
 * that the quarantine reason names the rule (I3, I6): zod lets `time_delta_ms: 0` through to be
 * rejected as `I6_dependency`, not as `schema`. A published schema says what the contract says,
 * so those rules are written into the JSON Schema here, wherever JSON Schema can say them.
 */
import { z } from 'zod';
import { optimizationHintSchema } from './optimization-hint.ts';
import { modelTurnSchema } from './model-turn.ts';
import { agentRunSchema } from './agent-run.ts';
import { agentRunPacketSchema, modelTurnPacketSchema, optimizationHintPacketSchema, outputArtifactPacketSchema, packetSchema, toolCallPacketSchema, toolDependencyPacketSchema } from './packets.ts';
import { toolDependencySchema } from './tool-dependency.ts';
import { toolInvocationSchema } from './tool-invocation.ts';
import { toolOutputSchema } from './tool-output.ts';

const SCHEMAS = {
  'tool-invocation': toolInvocationSchema,
  'tool-output': toolOutputSchema,
  'tool-dependency': toolDependencySchema,
  'tool-call-packet': toolCallPacketSchema,
  'output-artifact-packet': outputArtifactPacketSchema,
  'tool-dependency-packet': toolDependencyPacketSchema,
  'optimization-hint': optimizationHintSchema,
  'optimization-hint-packet': optimizationHintPacketSchema,
  'model-turn': modelTurnSchema,
  'model-turn-packet': modelTurnPacketSchema,
  'agent-run': agentRunSchema,
  'agent-run-packet': agentRunPacketSchema,
  packet: packetSchema,
} as const;

type Json = Record<string, unknown>;

/** The contract's rules ingest checks after the schema, as JSON Schema, by the zod schema they refine. */
const CONTRACT_RULES = new Map<z.core.$ZodType, (schema: Json) => void>([
  [
    toolDependencySchema.shape.time_delta_ms,
    (s) => {
      // I6 (SPEC §1: integer > 0).
      s.minimum = 1;
      s.description = 'succeeding.created_at − preceding.created_at, > 0 (I6)';
    },
  ],
  [
    toolInvocationSchema,
    (s) => {
      // I3: status success ⇒ error is null (or absent).
      s.if = { properties: { status: { const: 'success' } }, required: ['status'] };
      s.then = { properties: { error: { type: 'null' } } };
    },
  ],
  [
    toolDependencySchema,
    (s) => {
      s.description = 'I6: preceding_call_id ≠ succeeding_call_id (checked at ingest; not expressible in JSON Schema)';
    },
  ],
]);

/** The JSON Schema (draft 2020-12) of a packet contract, with the contract's rules written in. */
export function contractJsonSchema(schema: z.ZodType): Json {
  return z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => CONTRACT_RULES.get(ctx.zodSchema)?.(ctx.jsonSchema as Json),
  }) as Json;
}

/** The packet schemas by name, as the OpenAPI document references them. */
export function packetComponentSchemas(): Record<string, Json> {
  const strip = (s: Json) => {
    const { $schema: _drop, ...rest } = s;
    return rest;
  };
  return {
    ToolCallPacket: strip(contractJsonSchema(toolCallPacketSchema)),
    OutputArtifactPacket: strip(contractJsonSchema(outputArtifactPacketSchema)),
    ToolDependencyPacket: strip(contractJsonSchema(toolDependencyPacketSchema)),
    OptimizationHintPacket: strip(contractJsonSchema(optimizationHintPacketSchema)),
    ModelTurnPacket: strip(contractJsonSchema(modelTurnPacketSchema)),
    AgentRunPacket: strip(contractJsonSchema(agentRunPacketSchema)),
    Packet: {
      oneOf: ['ToolCallPacket', 'OutputArtifactPacket', 'ToolDependencyPacket', 'OptimizationHintPacket', 'ModelTurnPacket', 'AgentRunPacket'].map((n) => ({ $ref: `#/components/schemas/${n}` })),
      discriminator: { propertyName: 'type' },
    },
  };
}

/** File name → pretty-printed JSON Schema text (draft 2020-12). */
export function jsonSchemaFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const doc = { $id: `https://tool-audit.dev/schemas/${name}.schema.json`, ...contractJsonSchema(schema) };
    out[`${name}.schema.json`] = `${JSON.stringify(doc, null, 2)}\n`;
  }
  return out;
}
