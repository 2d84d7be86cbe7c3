/**
 * A server's part of the manifest: the diff against the part in force (added, removed, changed
 * by definition hash; a re-sent list is no change), the merge leaving other servers' and
 * hand-written tools alone, and one finding per (tool_id, old hash → new hash).
 */
import { describe, expect, it } from 'vitest';
import { buildServerPart, definitionFindings, describeChanges, diffServerPart, mergeServerPart, serverPartOf, toolOfEntry } from '../../../analyzers/mcp-manifest.ts';
import { definitionHash, type McpTool } from '../../../schemas/mcp-tools.ts';
import { schemaProblems } from '../../../schemas/json-schema-check.ts';
import { parseManifest, type Manifest } from '../../../schemas/tool-manifest.ts';

const tool = (name: string, description: string, extra: Partial<McpTool> = {}): McpTool => ({ name, description, inputSchema: { type: 'object' }, ...extra });
const handWritten = (() => {
  const p = parseManifest({ search: { tool_id: 'search', idempotent: true } });
  if (!p.ok) throw new Error('fixture');
  return p.manifest;
})();

describe("an MCP server's part of the manifest", () => {
  const v1 = [tool('read', 'Read a file'), tool('write', 'Write a file', { annotations: { destructiveHint: true } }), tool('list', 'List')];
  const first = buildServerPart('fs', v1, handWritten);
  const m1 = mergeServerPart(handWritten, 'fs', first.entries);

  it('adds every tool at first, beside the hand-written ones', () => {
    const d = diffServerPart(serverPartOf(handWritten, 'fs'), first.entries);
    expect(d).toEqual({ added: ['fs/list', 'fs/read', 'fs/write'], removed: [], changed: [], differs: true });
    expect(Object.keys(m1).sort()).toEqual(['fs/list', 'fs/read', 'fs/write', 'search']);
    expect(m1.search).toBe(handWritten.search);
  });

  it('sees no change in the same list re-sent (in another order)', () => {
    const again = buildServerPart('fs', [...v1].reverse(), m1);
    expect(diffServerPart(serverPartOf(m1, 'fs'), again.entries)).toEqual({ added: [], removed: [], changed: [], differs: false });
  });

  it('tells added, removed and changed apart, with the fields that changed, and merges only its own part', () => {
    const other = mergeServerPart(m1, 'web', buildServerPart('web', [tool('read', 'Fetch a page')], m1).entries);
    const v2 = [tool('read', 'Read any file'), tool('list', 'List'), tool('stat', 'Stat')];
    const part = buildServerPart('fs', v2, other);
    const old = serverPartOf(other, 'fs');
    const d = diffServerPart(old, part.entries);
    expect(d.added).toEqual(['fs/stat']);
    expect(d.removed).toEqual(['fs/write']);
    expect(d.changed).toEqual([{ tool_id: 'fs/read', old_hash: definitionHash(v1[0] as McpTool), new_hash: definitionHash(v2[0] as McpTool) }]);
    const merged = mergeServerPart(other, 'fs', part.entries);
    expect(Object.keys(merged).sort()).toEqual(['fs/list', 'fs/read', 'fs/stat', 'search', 'web/read']);
    expect(merged['web/read']).toBe(other['web/read']);
    // Fields from the definitions last recorded, or from what the entry keeps of them.
    const withHistory = describeChanges(d.changed, old, new Map([['fs/read', v1[0] as McpTool]]), part.tools);
    expect(withHistory.map((c) => c.fields)).toEqual([['description']]);
    expect(describeChanges(d.changed, old, new Map(), part.tools).map((c) => c.fields)).toEqual([['description']]);
  });

  it('sees a changed derived entry with an unchanged definition as a change without a finding', () => {
    const stale: Manifest = { ...m1, 'fs/read': { ...(m1['fs/read'] as Manifest[string]), idempotent: true } };
    const d = diffServerPart(serverPartOf(stale, 'fs'), buildServerPart('fs', v1, stale).entries);
    expect(d).toEqual({ added: [], removed: [], changed: [], differs: true });
  });

  it('reuses the verdict on a schema of an unchanged tool, warning again about one it refused', () => {
    const bad = tool('odd', 'x', { inputSchema: { type: 'nope' } });
    const good = tool('fine', 'y', { inputSchema: { type: 'object' } });
    const compiled: unknown[] = [];
    const counting = (s: unknown) => (compiled.push(s), schemaProblems(s));
    const a = buildServerPart('s', [bad, good], {}, counting);
    expect(a.entries['s/odd']?.input_schema).toBeNull();
    expect(a.warnings).toHaveLength(1);
    expect(compiled).toEqual([bad.inputSchema, good.inputSchema]);
    compiled.length = 0;
    const b = buildServerPart('s', [bad, good], a.entries, counting);
    expect(b.entries).toEqual(a.entries);
    expect(b.warnings).toEqual(a.warnings);
    // The accepted schema of the unchanged tool is not compiled again; the refused one is.
    expect(compiled).toEqual([bad.inputSchema]);
  });

  it('recovers an MCP tool from its entry when no definition was recorded', () => {
    const t = tool('read', 'Read', { title: 'Reader', outputSchema: { type: 'string' }, annotations: { openWorldHint: false } });
    const e = buildServerPart('fs', [t], {}).entries['fs/read'];
    expect(definitionHash(toolOfEntry(e as Manifest[string]))).toBe(definitionHash(t));
  });

  it('makes one finding per tool and hash change, keyed by both hashes', () => {
    const [f] = definitionFindings('fs', [{ tool_id: 'fs/read', old_hash: 'a'.repeat(64), new_hash: 'b'.repeat(64), fields: ['description'] }]);
    expect(f).toEqual({
      violation_key: `MCP/tool_definition_changed/fs/read/${'a'.repeat(64)}..${'b'.repeat(64)}`,
      invariant: 'MCP',
      packet_type: 'mcp_tools',
      ids: ['fs/read'],
      detail: JSON.stringify({ server: 'fs', tool: 'read', tool_id: 'fs/read', fields: ['description'], old_hash: 'a'.repeat(64), new_hash: 'b'.repeat(64) }),
    });
  });
});
