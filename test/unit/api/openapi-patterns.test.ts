/**
 * Every `pattern` of /openapi.json compiles in RE2 (re2js, the JavaScript port of Google's RE2:
 * no look-around, no back-references — what Go's and Rust's validators accept), and means there
 * what it means to the server: sample values judged alike by RE2 and by JavaScript.
 */
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../api/openapi.ts';
import { READ_ROUTES } from '../../../api/read-route-table.ts';

function patternsOf(node: unknown, at: string, out: Array<[string, string]>): Array<[string, string]> {
  if (Array.isArray(node)) node.forEach((n, i) => patternsOf(n, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'pattern' && typeof v === 'string') out.push([at, v]);
      else patternsOf(v, `${at}/${k}`, out);
    }
  }
  return out;
}

const doc = openApiDocument(READ_ROUTES, 'test');
const patterns = patternsOf(doc, '#', []);

describe('/openapi.json patterns', () => {
  it('has patterns to check (the from/to timestamps among them)', () => {
    expect(patterns.length).toBeGreaterThan(5);
    expect(patterns.some(([, p]) => p.includes('2200-01-01'))).toBe(true);
  });

  it('every pattern compiles without look-around', () => {
    const refused = patterns.filter(([, p]) => {
      try {
        RE2JS.compile(p);
        return false;
      } catch {
        return true;
      }
    });
    expect(refused.map(([at, p]) => `${at}: ${p.slice(0, 80)}`)).toEqual([]);
  });

  it('RE2 and JavaScript judge timestamps alike', () => {
    const [, ts] = patterns.find(([, p]) => p.includes('2200-01-01')) as [string, string];
    const re2 = RE2JS.compile(ts);
    const js = new RegExp(ts);
    const samples = ['2026-11-22', '2026-11-22T10:00:00Z', '2024-02-29', '2100-02-29', '2000-02-29T00:00', '1969-12-31', '2200-01-01T00:00:00+01:00', '2200-01-02', '2026-02-30', '2026-11-22T24:00', '0', '2026-11-22T10:00:00.123456789-05:30'];
    for (const s of samples) expect(re2.matcher(s).find(), s).toBe(js.test(s));
    expect(samples.filter((s) => js.test(s))).toEqual(['2026-11-22', '2026-11-22T10:00:00Z', '2024-02-29', '2000-02-29T00:00', '2200-01-01T00:00:00+01:00', '2026-11-22T10:00:00.123456789-05:30']);
  });
});
