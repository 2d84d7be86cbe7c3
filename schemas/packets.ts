/**
 * The packet envelopes of SPEC §1 (and §8's optimization_hint), discriminated by `type`.
 */
import { z } from 'zod';
import { agentRunSchema } from './agent-run.ts';
import { uuidSchema } from './common.ts';
import { modelTurnSchema } from './model-turn.ts';
import { optimizationHintSchema } from './optimization-hint.ts';
import { toolDependencySchema } from './tool-dependency.ts';
import { toolInvocationSchema } from './tool-invocation.ts';
import { toolOutputSchema } from './tool-output.ts';

/** `tool_call` → segment tool_invocations. */
export const toolCallPacketSchema = z.strictObject({
  type: z.literal('tool_call'),
  call_id: uuidSchema,
  invocation: toolInvocationSchema,
});

/** `output_artifact` → segment tool_outputs; content is the result data. */
export const outputArtifactPacketSchema = z.strictObject({
  type: z.literal('output_artifact'),
  output: toolOutputSchema,
  content: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]),
});

/** `tool_dependency` → segment tool_workflows. */
export const toolDependencyPacketSchema = z.strictObject({
  type: z.literal('tool_dependency'),
  dependency: toolDependencySchema,
});

/** `optimization_hint` → segment workflow_optimizations. */
export const optimizationHintPacketSchema = z.strictObject({
  type: z.literal('optimization_hint'),
  hint: optimizationHintSchema,
});

/** `model_turn` → segment model_turns. */
export const modelTurnPacketSchema = z.strictObject({
  type: z.literal('model_turn'),
  turn: modelTurnSchema,
});

/** `agent_run` → segment agent_runs. */
export const agentRunPacketSchema = z.strictObject({
  type: z.literal('agent_run'),
  run: agentRunSchema,
});

/** Any packet. */
export const packetSchema = z.discriminatedUnion('type', [
  toolCallPacketSchema,
  outputArtifactPacketSchema,
  toolDependencyPacketSchema,
  optimizationHintPacketSchema,
  modelTurnPacketSchema,
  agentRunPacketSchema,
]);

/** The packet types. */
export const PACKET_TYPES = ['tool_call', 'output_artifact', 'tool_dependency', 'optimization_hint', 'model_turn', 'agent_run'] as const;
/** One of the packet types. */
export type PacketType = (typeof PACKET_TYPES)[number];
/** A tool_call packet. */
export type ToolCallPacket = z.infer<typeof toolCallPacketSchema>;
/** An output_artifact packet. */
export type OutputArtifactPacket = z.infer<typeof outputArtifactPacketSchema>;
/** A tool_dependency packet. */
export type ToolDependencyPacket = z.infer<typeof toolDependencyPacketSchema>;
/** An optimization_hint packet. */
export type OptimizationHintPacket = z.infer<typeof optimizationHintPacketSchema>;
/** A model_turn packet. */
export type ModelTurnPacket = z.infer<typeof modelTurnPacketSchema>;
/** An agent_run packet. */
export type AgentRunPacket = z.infer<typeof agentRunPacketSchema>;
/** Any packet. */
export type Packet = z.infer<typeof packetSchema>;
