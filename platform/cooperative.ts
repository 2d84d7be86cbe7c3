/**
 * Long synchronous work split so that the event loop keeps serving: every request, Kafka heartbeat
 * and statement result of the process waits while a job's loop runs (the jobs' ClickHouse threads
 * are niced; their JavaScript is not). At 30 M calls the longest delay of each second was ~0.26 s
 * at the median while the jobs caught up (bench:history), most of it the dependency analyzer's and
 * the auditor's loops over a step's rows and the parsing of those rows.
 */

/** Items handled between two turns of the event loop. */
export const SLICE_ITEMS = 2_000;

/** Lets the event loop run what waits (I/O callbacks, requests) before continuing. */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs `each` over `items`, yielding to the event loop every `slice` items. */
export async function forEachSliced<T>(items: Iterable<T>, each: (item: T) => void, slice = SLICE_ITEMS): Promise<void> {
  let n = 0;
  for (const item of items) {
    each(item);
    if (++n % slice === 0) await yieldToLoop();
  }
}

/** `items` through `map`, in order, yielding to the event loop every `slice` items. */
export async function mapSliced<T, U>(items: Iterable<T>, map: (item: T) => U, slice = SLICE_ITEMS): Promise<U[]> {
  const out: U[] = [];
  await forEachSliced(items, (item) => out.push(map(item)), slice);
  return out;
}

/** `items` (mapped by `key`) gathered into a Set, yielding to the event loop every `slice` items. */
export async function setSliced<T, K>(items: Iterable<T>, key: (item: T) => K, slice = SLICE_ITEMS): Promise<Set<K>> {
  const out = new Set<K>();
  await forEachSliced(items, (item) => out.add(key(item)), slice);
  return out;
}
