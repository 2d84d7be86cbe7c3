/**
 * The pure parts of the finding pages: a manifest entry's changes between versions,
 * a hint's evidence as text, the pages' URLs, and where a quarantined packet came from.
 */
import { describe, expect, it } from 'vitest';
import { entryDiff, evidenceFigures, hintsHref, promises, quarantineHref, sourceText, violationsHref } from '../../../web/app/finding-model.ts';
import { manifestOf } from '../../helpers/manifests.ts';

const entryOf = (doc: Record<string, unknown>) => manifestOf({ t: doc }).t!;

describe('manifest versions', () => {
  it('lists exactly the fields that changed, in the entry order, as JSON', () => {
    const before = entryOf({ idempotent: true, timeout_ms: 15_000, cache_ttl_ms: 3_600_000 });
    const after = entryOf({ idempotent: true, timeout_ms: 20_000, cache_ttl_ms: 3_600_000, description: 'a "quoted" tool' });
    expect(entryDiff(before, after)).toEqual([
      { field: 'description', before: '""', after: '"a \\"quoted\\" tool"' },
      { field: 'timeout_ms', before: '15000', after: '20000' },
    ]);
    expect(entryDiff(before, before)).toEqual([]);
    expect(entryDiff(null, after)).toEqual([{ field: '(tool)', before: 'not declared', after: 'declared' }]);
    expect(entryDiff(after, null)).toEqual([{ field: '(tool)', before: 'declared', after: 'not declared' }]);
    // A nested schema that changed is one field.
    const schema = (max: number) => entryOf({ input_schema: { type: 'object', properties: { n: { type: 'integer', maximum: max } } } });
    expect(entryDiff(schema(1), schema(2)).map((c) => c.field)).toEqual(['input_schema']);
  });

  it('names a tool\'s promises', () => {
    expect(promises(entryOf({ idempotent: true, requires_approval: true, communicates_externally: true }))).toBe('idempotent, requires approval, external');
    expect(promises(entryOf({}))).toBe('–');
  });
});

describe('hint evidence', () => {
  it('prints scalars as they are, lists by their length and maps by their pairs', () => {
    expect(evidenceFigures({ ttl_ms: 300_000, hits: 12, errors: { 'HTTP 503': 7, timeout: 2 }, calls: ['a', 'b'], ok: true, nested: { a: { b: 1 } } })).toEqual([
      'ttl_ms: 300000',
      'hits: 12',
      'errors: HTTP 503 7, timeout 2',
      'calls: 2 items',
      'ok: true',
      'nested: a {"b":1}',
    ]);
  });
});

describe('page URLs', () => {
  it('keep only the filters that are set, encoded', () => {
    expect(violationsHref({})).toBe('/violations');
    expect(violationsHref({ hours: 24, invariant: 'M9', task: 'a b&c', tool: 'fetch_url' })).toBe('/violations?hours=24&invariant=M9&task=a+b%26c&tool=fetch_url');
    expect(hintsHref({ kind: 'retry_storm', cursor: 'xyz' })).toBe('/hints?kind=retry_storm&cursor=xyz');
    expect(quarantineHref({ id: 'kafka:t/0@5' })).toBe('/quarantine?id=kafka%3At%2F0%405');
  });

  it('say where a quarantined packet came from', () => {
    const base = { quarantine_id: 'x', received_at: '', reason: { code: 'I5', message: '' }, packet_type: null, ids: [], raw: '', raw_encoding: 'utf8' as const, replays: [] };
    expect(sourceText({ ...base, source: { kind: 'kafka', topic: 'tool-audit.packets', partition: 2, offset: '17', request_id: null } })).toBe('Kafka tool-audit.packets/2@17');
    expect(sourceText({ ...base, source: { kind: 'http', topic: null, partition: null, offset: null, request_id: 'req-1' } })).toBe('HTTP request req-1');
  });
});
