/**
 * Work split for the event loop: every item is handled once and in order, and what the loop has
 * waiting (here a setImmediate callback, as an I/O callback would be) runs between slices — so
 * a long job loop or a large result never holds a request for the whole of it.
 */
import { describe, expect, it } from 'vitest';
import { forEachSliced, mapSliced, setSliced } from '../../../platform/cooperative.ts';
import { parseLines } from '../../../platform/clickhouse/result-lines.ts';

/** How many items were handled each time the event loop got a turn. */
function turnsWatcher(handled: () => number): { stop: () => number[] } {
  const seen: number[] = [];
  let on = true;
  const tick = () => {
    seen.push(handled());
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      on = false;
      return seen;
    },
  };
}

describe('forEachSliced', () => {
  it('handles every item in order and lets the loop run between slices', async () => {
    const out: number[] = [];
    const watch = turnsWatcher(() => out.length);
    await forEachSliced(Array.from({ length: 1000 }, (_, i) => i), (i) => out.push(i), 100);
    const turns = watch.stop();
    expect(out).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    // The loop ran after 100, 200, … items: never more than one slice without a turn.
    const progress = [...new Set(turns)].filter((n) => n > 0 && n < 1000);
    expect(progress.length).toBeGreaterThanOrEqual(8);
    for (let i = 1; i < progress.length; i++) expect((progress[i] as number) - (progress[i - 1] as number)).toBeLessThanOrEqual(100);
  });
});

describe('mapSliced and setSliced', () => {
  it('map every item in order and gather distinct keys in first-seen order, letting the loop run between slices', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    let mapped = 0;
    const watch = turnsWatcher(() => mapped);
    expect(await mapSliced(items, (i) => (mapped++, i * 2), 100)).toEqual(items.map((i) => i * 2));
    expect(new Set(watch.stop().filter((n) => n > 0 && n < 1000)).size).toBeGreaterThanOrEqual(8);
    expect([...(await setSliced(items, (i) => i % 7, 100))]).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await mapSliced([], (i: number) => i)).toEqual([]);
  });
});

describe('parseLines', () => {
  it('parses each row of a result (every row ends with a newline, empty rows kept) and yields between slices', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ i, s: i % 7 === 0 ? 'a\\nb "c" ü' : '' }));
    const text = rows.map((r) => `${JSON.stringify(r)}\n`).join('');
    let parsed = 0;
    const watch = turnsWatcher(() => parsed);
    const got = await parseLines(text, (line) => (parsed++, JSON.parse(line) as unknown), 500);
    const turns = watch.stop();
    expect(got).toEqual(rows);
    expect(new Set(turns.filter((n) => n > 0 && n < 5000)).size).toBeGreaterThanOrEqual(8);
    // TabSeparated rows with an empty value, and an empty result.
    expect(await parseLines('a\t\n\t\n\n', (l) => l.split('\t'))).toEqual([['a', ''], ['', ''], ['']]);
    expect(await parseLines('', (l) => l)).toEqual([]);
  });
});
