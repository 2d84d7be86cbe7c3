import { describe, expect, it } from 'vitest';
import { literalOf, renderStatement } from '../../../platform/clickhouse/literals.ts';

describe('placeholders rendered as typed literals', () => {
  it('renders each type as the text the engine parses, strings and identifiers escaped', () => {
    expect(literalOf('String', "a'b\\c")).toBe("'a\\'b\\\\c'");
    expect(literalOf('String', 'x\ny\0z\x7f')).toBe("'x\\x0ay\\x00z\\x7f'");
    expect(literalOf('Identifier', 'we`ird.name')).toBe('`we\\`ird.name`');
    expect(literalOf('UInt32', 50)).toBe("CAST('50' AS UInt32)");
    expect(literalOf('UInt64', 18446744073709551615n)).toBe("CAST('18446744073709551615' AS UInt64)");
    expect(literalOf('Bool', false)).toBe("CAST('false' AS Bool)");
    expect(literalOf("DateTime64(3, 'UTC')", '2026-01-02 03:04:05.678')).toBe("CAST('2026-01-02 03:04:05.678' AS DateTime64(3, 'UTC'))");
    expect(literalOf('Array(String)', ["a'", '}'])).toBe("CAST(['a\\'','}'] AS Array(String))");
    expect(literalOf('Array(UUID)', [])).toBe('CAST([] AS Array(UUID))');
    expect(literalOf('Nullable(String)', null)).toBe('CAST(NULL AS Nullable(String))');
    expect(literalOf('Array(Array(UInt8))', [[1], []])).toBe("CAST([['1'],[]] AS Array(Array(UInt8)))");
  });

  it('replaces placeholders only outside strings, quoted names and comments', () => {
    const sql = "SELECT {a:String}, '{a:String}', `{a:String}`, \"{a:String}\" -- {a:String}\n/* {a:String} */ { a : UInt8 }, 'it''s {a:String}', 'x\\'{a:String}'";
    expect(renderStatement(sql, { a: 7 })).toBe(
      "SELECT '7', '{a:String}', `{a:String}`, \"{a:String}\" -- {a:String}\n/* {a:String} */ CAST('7' AS UInt8), 'it''s {a:String}', 'x\\'{a:String}'",
    );
    // Not a placeholder: a map literal, a lone brace.
    expect(renderStatement("SELECT map('k', 1), {'k': 1}, '{'", {})).toBe("SELECT map('k', 1), {'k': 1}, '{'");
  });

  it('never lets a value end its literal: every hostile string stays one literal', () => {
    // eslint-disable-next-line no-control-regex -- raw control characters are what must not appear
    const raw = { str: /['\\\x00-\x1f]/, id: /[`\\\x00-\x1f]/ };
    const hostile = ["'", "\\'", '\\', "'); DROP TABLE x; --", '}', '{db:Identifier}', '\n', '\0', '\uD800', '`', "\\\\'", 'x'.repeat(1 << 20)];
    for (const v of hostile) {
      const lit = literalOf('String', v);
      // The literal's body holds no unescaped quote and no raw control character.
      const body = lit.slice(1, -1);
      expect(body.replace(/\\./gs, '')).not.toMatch(raw.str);
      const id = literalOf('Identifier', v);
      expect(id.slice(1, -1).replace(/\\./gs, '')).not.toMatch(raw.id);
      // The placeholder syntax inside a value is data, never rendered again.
      expect(renderStatement('SELECT {s:String}, {t:String}', { s: v, t: 'after' })).toBe(`SELECT ${lit}, 'after'`);
    }
  });

  it('refuses what the engine would refuse to bind, as a non-retryable statement error', () => {
    const refused = (f: () => unknown) => expect(f).toThrow(expect.objectContaining({ code: 'CLICKHOUSE_QUERY_FAILED', retryable: false }));
    refused(() => renderStatement('SELECT {missing:String}', {}));
    refused(() => literalOf('UInt32', Number.NaN));
    refused(() => literalOf('UInt64', 2 ** 60));
    refused(() => literalOf('Array(String)', 'not an array'));
    refused(() => literalOf('Identifier', ''));
    refused(() => literalOf('String', { an: 'object' }));
    refused(() => literalOf("String') || ('", 'x'));
  });
});
