import { describe, expect, it } from 'vitest';
import { countsObject, pageOf } from '../../../queries/sql.ts';

describe('sql helpers', () => {
  it('pages with one row of look-ahead', () => {
    expect(pageOf([1, 2, 3], 2)).toEqual({ rows: [1, 2], more: true });
    expect(pageOf([1, 2], 2)).toEqual({ rows: [1, 2], more: false });
  });

  it('keeps data keys such as __proto__ as ordinary keys', () => {
    const o = countsObject([{ k: '__proto__', n: 2 }, { k: 'constructor', n: '3' }]);
    expect(Object.keys(o)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(o))).toEqual(JSON.parse('{"__proto__": 2, "constructor": 3}'));
  });
});
