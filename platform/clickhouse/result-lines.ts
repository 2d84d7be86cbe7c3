/**
 * A statement's result, one line per row, turned into rows without holding the event loop: a job
 * reading 250 000 rows parsed them in one go (a JSON.parse of tens of MB) while every request of
 * the process waited. Rows are parsed a slice at a time, the loop served between slices.
 */
import { SLICE_ITEMS, yieldToLoop } from '../cooperative.ts';

/** Each line of `text` (every row ends with a newline) through `parse`, yielding every `sliceRows` rows. */
export async function parseLines<T>(text: string, parse: (line: string) => T, sliceRows = SLICE_ITEMS): Promise<T[]> {
  const out: T[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    out.push(parse(text.slice(start, end)));
    start = end + 1;
    if (out.length % sliceRows === 0) await yieldToLoop();
  }
  return out;
}
