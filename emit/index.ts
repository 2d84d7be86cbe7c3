/**
 * The tool-audit emitter SDK: wrap tool calls with `createAuditEmitter(...).invoke(...)` and
 * every call becomes a tool_call packet (plus an output_artifact on success with content),
 * delivered in the background to Kafka or a tool-audit server.
 */
export {
  createAuditEmitter,
  EmitterTimeoutError,
  type AuditEmitter,
  type AuditEmitterOptions,
  type EmitterStats,
  type InvokeOptions,
  type ObservedCall,
  type BudgetQuestion,
  type ToolArgs,
  type ToolContext,
  type ToolRun,
} from './emitter.ts';
export {
  auditResult,
  AuditedResult,
  statusOfCategory,
  type AuditDetails,
  type ErrorCategory,
  type ToolErrorEnvelope,
  type ToolSuccessEnvelope,
} from './result.ts';
export type { BufferOptions, BufferStats } from './buffer-options.ts';
export type { CallApproval, RecordedContent } from './packets.ts';
export type { ObservedTurn } from './model-turn.ts';
export type { ObservedRun } from './agent-run.ts';
export type { RedactionPolicy } from '../schemas/redaction-policy.ts';
export { BudgetDeniedError, type BudgetCheckOptions, type BudgetDecision, type BudgetFigures, type BudgetStats } from './budget.ts';
export { createKafkaTransport, DEFAULT_TOPIC, type KafkaTransportOptions } from './kafka-transport.ts';
export { createHttpTransport, type HttpTransportOptions } from './http-transport.ts';
export {
  createMemoryTransport,
  DeliveryError,
  type MemoryTransport,
  type PacketTransport,
  type SendReceipt,
  type TransportMessage,
} from './transport.ts';
