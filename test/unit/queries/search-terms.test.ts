/**
 * How q of GET /v1/search is read: terms and quoted phrases, lower-cased, split into tokens as
 * ClickHouse's splitByNonAlpha splits text, the JSON-escaped form Python's json.dumps stores, and
 * the RE2 patterns that hold an item of several tokens to token boundaries. Oracles written out.
 */
import { describe, expect, it } from 'vitest';
import { parseSearch } from '../../../queries/search-terms.ts';

const B = '[^a-z0-9\\x{80}-\\x{10FFFF}]';

describe('parseSearch', () => {
  it('reads terms and quoted phrases, lower-cased', () => {
    const r = parseSearch('Passwd "Reset By Peer" x');
    expect('items' in r && r.items.map((i) => [i.item, i.phrase, i.forms.map((f) => f.text)])).toEqual([
      ['Passwd', false, ['passwd']],
      ['Reset By Peer', true, ['reset by peer']],
      ['x', false, ['x']],
    ]);
  });

  it('matches a one-token item as a token, and several tokens as a bounded pattern', () => {
    const r = parseSearch('passwd /etc/passwd "port 80"');
    if (!('items' in r)) throw new Error(r.error);
    expect(r.items.map((i) => i.forms[0])).toEqual([
      { tokens: ['passwd'], pattern: null, text: 'passwd' },
      // Starts and ends on a separator or a token: boundaries only where the item has a token character at its end.
      { tokens: ['etc', 'passwd'], pattern: `/etc/passwd(?:$|${B})`, text: '/etc/passwd' },
      { tokens: ['port', '80'], pattern: `(?:^|${B})port 80(?:$|${B})`, text: 'port 80' },
    ]);
  });

  it('adds the forms json.dumps stores, of the lower- and the upper-cased item: \\u escapes for non-ASCII (emoji as surrogate pairs), \\" and \\\\', () => {
    const r = parseSearch('café 🧪 "C:\\temp"');
    if (!('items' in r)) throw new Error(r.error);
    expect(r.items.map((i) => i.forms.map((f) => f.text))).toEqual([
      ['café', 'caf\\u00e9', 'caf\\u00c9'],
      ['🧪', '\\ud83e\\uddea'],
      ['c:\\temp', 'c:\\\\temp'],
    ]);
    expect(r.items[0]?.forms[1]).toEqual({ tokens: ['caf', 'u00e9'], pattern: `(?:^|${B})caf\\\\u00e9(?:$|${B})`, text: 'caf\\u00e9' });
    // Non-ASCII characters are token characters, as ClickHouse keeps their bytes together.
    expect(r.items[1]?.forms[0]).toEqual({ tokens: ['🧪'], pattern: null, text: '🧪' });
  });

  it('escapes RE2 operators in a pattern', () => {
    const r = parseSearch('"a.b*c (d)"');
    if (!('items' in r)) throw new Error(r.error);
    expect(r.items[0]?.forms[0]?.pattern).toBe(`(?:^|${B})a\\.b\\*c \\(d\\)`);
  });

  it('refuses a query with nothing to search for, too many items or too long an item', () => {
    expect(parseSearch('')).toEqual({ error: 'q: give at least one term or "quoted phrase"' });
    expect(parseSearch('  ""  ')).toEqual({ error: 'q: give at least one term or "quoted phrase"' });
    expect(parseSearch('!!!')).toEqual({ error: 'q: "!!!" has no letter or digit to search for' });
    expect(parseSearch(Array.from({ length: 11 }, (_, i) => `t${i}`).join(' '))).toEqual({ error: 'q: at most 10 terms and phrases' });
    expect(parseSearch(`"${'a'.repeat(501)}"`)).toEqual({ error: 'q: an item is longer than 500 characters' });
  });
});
