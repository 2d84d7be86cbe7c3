/**
 * An MCP tool as a manifest entry: tool_id, name and description fallbacks, idempotency and the
 * capability tags from explicit annotations only, the definition hash against an independently
 * written canonical form (Python's json.dumps(sort_keys=True) of the five parts), a bad schema
 * kept as null with a warning, and the report body's refusals, each named.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { changedFields, definitionHash, mcpEntry, mcpToolsBodySchema, type McpTool } from '../../../schemas/mcp-tools.ts';
import { schemaChecker, schemaProblems } from '../../../schemas/json-schema-check.ts';
import { parseManifest } from '../../../schemas/tool-manifest.ts';

const read: McpTool = {
  name: 'read_file',
  description: 'Read a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
};

describe('mcpEntry', () => {
  it('maps name, description, schemas, idempotency and the closed-world tag, and tags the entry with its server', () => {
    const { entry, warnings } = mcpEntry('fs', read);
    expect(warnings).toEqual([]);
    expect(entry).toMatchObject({
      tool_id: 'fs/read_file',
      name: 'read_file',
      description: 'Read a file',
      input_schema: read.inputSchema,
      output_schema: null,
      idempotent: true,
      accesses_private_data: true,
      receives_untrusted_input: false,
      communicates_externally: false,
      requires_approval: false,
      timeout_ms: null,
    });
    expect(entry.mcp).toEqual({ server: 'fs', tool: 'read_file', annotations: read.annotations, definition_hash: definitionHash(read) });
    // The entry is a valid manifest entry as PUT /v1/manifests would take it.
    const parsed = parseManifest({ [entry.tool_id]: entry });
    expect(parsed.ok && parsed.manifest[entry.tool_id]).toEqual(entry);
  });

  it('takes title before annotations.title before name; tags open-world tools as untrusted and external; no hint, no tag', () => {
    const open = mcpEntry('web', { name: 'fetch', title: 'Fetch', inputSchema: {}, annotations: { title: 'Ann', openWorldHint: true } }).entry;
    expect(open).toMatchObject({ name: 'Fetch', description: '', idempotent: false, accesses_private_data: false, receives_untrusted_input: true, communicates_externally: true });
    expect(mcpEntry('web', { name: 'fetch', inputSchema: {}, annotations: { title: 'Ann' } }).entry).toMatchObject({ name: 'Ann', accesses_private_data: false, receives_untrusted_input: false, communicates_externally: false });
    const bare = mcpEntry('web', { name: 'fetch', inputSchema: {} }).entry;
    expect(bare).toMatchObject({ name: 'fetch', idempotent: false, accesses_private_data: false, receives_untrusted_input: false, communicates_externally: false });
    expect(bare.mcp?.annotations).toBeNull();
  });

  it('keeps a tool whose inputSchema Ajv refuses, without the schema, and says so', () => {
    const bad: McpTool = { name: 'odd', inputSchema: { type: 'object', properties: { x: { type: 'no-such-type' } } }, outputSchema: { type: 'object' } };
    const { entry, warnings } = mcpEntry('s', bad);
    expect(entry.input_schema).toBeNull();
    expect(entry.output_schema).toEqual({ type: 'object' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^s\/odd: inputSchema refused \(not a valid JSON Schema: /);
  });
});

describe('schemaChecker', () => {
  it('judges as schemaProblems does, schema after schema, ids and drafts included', () => {
    const check = schemaChecker();
    const cases: unknown[] = [
      { type: 'object' },
      { type: 'nope' },
      { type: 'object' },
      { $id: 'https://x.test/a', type: 'string' },
      { $id: 'https://x.test/a', type: 'integer' },
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalItems: false },
      { $ref: '#/$defs/missing' },
      { type: 'string', format: 'email' },
    ];
    for (const s of [...cases, ...cases]) expect(check(s).length > 0, JSON.stringify(s)).toBe(schemaProblems(s).length > 0);
    expect(check({ type: 'nope' })).toEqual(schemaProblems({ type: 'nope' }));
  });
});

describe('definitionHash', () => {
  it('is SHA-256 of the sorted-key canonical JSON of description, title, inputSchema, outputSchema, annotations (those present)', () => {
    const t: McpTool = { name: 'n', title: 'Tï', description: 'd', inputSchema: { b: 1, a: [true, null] }, _meta: { ignored: 1 }, extra: 'ignored too' };
    const canonical = '{"description": "d", "inputSchema": {"a": [true, null], "b": 1}, "title": "T\\u00ef"}';
    expect(definitionHash(t)).toBe(createHash('sha256').update(canonical).digest('hex'));
    expect(definitionHash({ ...t, name: 'other', _meta: { x: 2 } })).toBe(definitionHash(t));
    expect(definitionHash({ ...t, inputSchema: { a: [true, null], b: 1 } })).toBe(definitionHash(t));
    expect(definitionHash({ ...t, description: 'd ' })).not.toBe(definitionHash(t));
  });

  it('changedFields names the parts that differ', () => {
    expect(changedFields(read, { ...read, description: 'Read any file' })).toEqual(['description']);
    expect(changedFields(read, { ...read, title: 'Read', annotations: { readOnlyHint: true }, outputSchema: {} })).toEqual(['title', 'output_schema', 'annotations']);
    expect(changedFields(read, { ...read, inputSchema: { type: 'object' } })).toEqual(['input_schema']);
    expect(changedFields(read, { ...read, _meta: { v: 2 } })).toEqual([]);
  });
});

describe('mcpToolsBodySchema', () => {
  const body = { server: 'fs', server_info: { name: 'secure-filesystem-server', version: '0.2.0', extra: 1 }, tools: [read], seen_at: '2026-11-01T10:00:00.000Z' };

  it('takes a report and keeps the fields of tools and server_info it does not name', () => {
    const r = mcpToolsBodySchema.parse({ ...body, tools: [{ ...read, icons: [{ src: 'x' }] }] });
    expect(r.tools[0]).toMatchObject({ icons: [{ src: 'x' }] });
    expect(r.server_info).toMatchObject({ extra: 1 });
    expect(mcpToolsBodySchema.parse({ ...body, server_info: null, seen_at: '2026-11-01T10:00:00+02:00' }).server_info).toBeNull();
  });

  it('names every problem', () => {
    const r = mcpToolsBodySchema.safeParse({ server: '', server_info: { name: 7 }, tools: [read, { ...read }, { name: 'y', inputSchema: 'object' }], seen_at: 'yesterday', colour: 'red' });
    expect(r.success).toBe(false);
    const paths = r.error?.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toEqual(expect.arrayContaining(['server', 'server_info.name', 'tools.2.inputSchema', 'seen_at', '']));
    // What MCP requires but a careless server leaves out does not cost the report.
    expect(mcpToolsBodySchema.safeParse({ ...body, server_info: { name: 'x' }, tools: [{ name: 'no-schema' }] }).success).toBe(true);
    const dup = mcpToolsBodySchema.safeParse({ ...body, tools: [read, read] });
    expect(dup.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['tools.1.name', '"read_file" is listed twice']]);
    expect(mcpToolsBodySchema.safeParse({ ...body, tools: [{ ...read, name: 'x'.repeat(260) }] }).error?.issues[0]?.message).toMatch(/over 256 characters/);
    expect(mcpToolsBodySchema.safeParse({ ...body, server: 's'.repeat(129) }).success).toBe(false);
  });
});
