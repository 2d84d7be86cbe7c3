/**
 * Manifest parsing: tool-smith's worked example parses with every default applied; a bad
 * document is refused whole with every error named; YAML and JSON give the same manifest; the
 * CLI's file loader resolves schema paths relative to the manifest file.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManifestFiles } from '../../../cli/manifest-files.ts';
import { decodeManifestText } from '../../../schemas/manifest-text.ts';
import { parseManifest } from '../../../schemas/tool-manifest.ts';

const WORKED_YAML = `
recipe_search:
  tool_id: recipe_search
  name: "Search recipes"
  description: "Search recipe database"
  idempotent: true
  timeout_ms: 10000
  max_retries: null              # use global resilience default
  rate_limit_rpm: null
  cache_ttl_ms: 60000
timer_set:
  tool_id: timer_set
  idempotent: false
  timeout_ms: 5000
  communicates_externally: true
  max_retries: 1
  cache_ttl_ms: 0
nutrition_lookup:
  tool_id: nutrition_lookup
  billable: true
  cost_usd_per_call: 0.002
  rate_limit_rpm: 30
`;

const decode = (text: string) => {
  const d = decodeManifestText(text);
  if (!d.ok) throw new Error(d.error);
  return d.doc;
};

describe('parseManifest', () => {
  it('parses the worked example with every default applied (only tool_id is required)', () => {
    const r = parseManifest(decode(WORKED_YAML));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.keys(r.manifest).sort()).toEqual(['nutrition_lookup', 'recipe_search', 'timer_set']);
    expect(r.manifest.nutrition_lookup).toEqual({
      tool_id: 'nutrition_lookup',
      name: 'nutrition_lookup',
      description: '',
      input_schema: null,
      output_schema: null,
      idempotent: false,
      timeout_ms: null,
      accesses_private_data: false,
      receives_untrusted_input: false,
      communicates_externally: false,
      max_retries: null,
      requires_approval: false,
      rate_limit_rpm: 30,
      cache_ttl_ms: null,
      billable: true,
      cost_usd_per_call: 0.002,
      mcp: null,
    });
    expect(r.manifest.recipe_search?.cache_ttl_ms).toBe(60000);
    expect(r.manifest.timer_set?.max_retries).toBe(1);
    expect(r.warnings).toEqual([]);
  });

  it('gives the same manifest from JSON and YAML', () => {
    const yaml = parseManifest(decode(WORKED_YAML));
    const json = parseManifest(decode(JSON.stringify(decode(WORKED_YAML))));
    expect(json).toEqual(yaml);
  });

  it('refuses a bad manifest whole, naming every error', () => {
    const r = parseManifest({
      good: { tool_id: 'good', idempotent: true },
      wrong_key: { tool_id: 'other' },
      bad_types: { tool_id: 'bad_types', idempotent: 'yes', timeout_ms: -5, rate_limit_rpm: 1.5, surprise: 1 },
      bad_schema: { tool_id: 'bad_schema', input_schema: { type: 'strin' } },
      path_schema: { tool_id: 'path_schema', input_schema: 'schemas/x.json' },
      no_id: { name: 'x' },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const text = r.errors.join('\n');
    for (const expected of [
      'wrong_key.tool_id: is "other" but the entry is keyed "wrong_key"',
      'bad_types.idempotent',
      'bad_types.timeout_ms: timeout_ms must be > 0',
      'bad_types.rate_limit_rpm: rate_limit_rpm must be an integer',
      'bad_types: Unrecognized key: "surprise"',
      'bad_schema.input_schema: not a valid JSON Schema',
      'path_schema.input_schema: is a path (schemas/x.json)',
      'no_id.tool_id',
    ]) {
      expect(text).toContain(expected);
    }
    expect(r.errors.some((e) => e.startsWith('good'))).toBe(false);
  });

  it('refuses what is not a map of tools, and an empty one', () => {
    expect(parseManifest([1, 2])).toEqual({ ok: false, errors: ['manifest: must be a map of tool_id → entry'] });
    expect(parseManifest({})).toEqual({ ok: false, errors: ['manifest: declares no tool'] });
    expect(decodeManifestText('a: [1, 2')).toMatchObject({ ok: false });
    expect(decodeManifestText('a: 1\na: 2\n')).toMatchObject({ ok: false });
  });

  it('warns about a tool carrying all three capability tags without requires_approval', () => {
    const tags = { accesses_private_data: true, receives_untrusted_input: true, communicates_externally: true };
    const r = parseManifest({ mail_send: { tool_id: 'mail_send', ...tags }, safe_send: { tool_id: 'safe_send', ...tags, requires_approval: true }, two_tags: { tool_id: 'two_tags', ...tags, communicates_externally: false } });
    expect(r.ok && r.warnings.length).toBe(1);
    expect(r.ok && r.warnings[0]).toMatch(/^mail_send: .*lethal trifecta/);
  });
});

describe('loadManifestFiles', () => {
  it('reads a directory of manifests, resolving schema paths relative to each file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifests-'));
    mkdirSync(join(dir, 'schemas'));
    writeFileSync(join(dir, 'schemas', 'search_input.json'), JSON.stringify({ type: 'object', required: ['query'], properties: { query: { type: 'string' } } }));
    writeFileSync(join(dir, 'a.yaml'), 'search:\n  tool_id: search\n  input_schema: schemas/search_input.json\n  idempotent: true\n');
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ fetch: { tool_id: 'fetch' } }));
    const r = loadManifestFiles(dir);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.manifest.search?.input_schema).toEqual({ type: 'object', required: ['query'], properties: { query: { type: 'string' } } });
    expect(Object.keys(r.manifest).sort()).toEqual(['fetch', 'search']);
  });

  it('loads examples/manifest.yaml, the README example', () => {
    const r = loadManifestFiles(new URL('../../../examples/manifest.yaml', import.meta.url).pathname);
    expect(r.ok && r.manifest.search_web?.input_schema).toMatchObject({ required: ['query'] });
  });

  it('names a missing schema file and a tool declared in two files, applying nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifests-'));
    writeFileSync(join(dir, 'a.yaml'), 'search:\n  tool_id: search\n  input_schema: schemas/missing.json\n');
    writeFileSync(join(dir, 'b.yaml'), 'search:\n  tool_id: search\n');
    const r = loadManifestFiles(dir);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.join('\n')).toMatch(/missing\.json/);
    expect(r.errors.join('\n')).toMatch(/search is also declared in .*a\.yaml/);
  });
});
