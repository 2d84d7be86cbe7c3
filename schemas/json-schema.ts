/**
 * JSON Schema documents generated from the zod contracts, for emitters in other languages.
 * Checked in under schemas/json/; a unit test fails when they are stale.
 */
import { z } from 'zod';
import { outputArtifactPacketSchema, packetSchema, toolCallPacketSchema, toolDependencyPacketSchema } from './packets.ts';
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
  packet: packetSchema,
} as const;

/** File name → pretty-printed JSON Schema text (draft 2020-12). */
export function jsonSchemaFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const doc = { $id: `https://tool-audit.dev/schemas/${name}.schema.json`, ...z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) };
    out[`${name}.schema.json`] = `${JSON.stringify(doc, null, 2)}\n`;
  }
  return out;
}
