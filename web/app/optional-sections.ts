/**
 * Sections of the waste page that need routes other issues add (SPEC "later issues": the cache
 * simulation's TTL curve, budgets). The page shows one only when the server publishes its route
 * in /openapi.json, and reads its answer generically — the first array of objects in it, as a
 * table and, where it has a numeric first column (a TTL), as a curve — so a server that gains
 * the route gains the section without a change here. Pure: unit-tested.
 */

/** A section the waste page may show. */
export interface OptionalSection {
  id: string;
  title: string;
  /** The GET route that must be published (an OpenAPI path). */
  path: string;
  /** Draw a curve of the numeric columns against the first one. */
  curve: boolean;
}

/** The sections waiting for their routes. */
export const OPTIONAL_SECTIONS: readonly OptionalSection[] = [
  { id: 'cache-ttl', title: 'Cache simulation: savings by TTL', path: '/v1/cache/ttl-curve', curve: true },
  { id: 'cache-simulation', title: 'Cache simulation', path: '/v1/cache/simulation', curve: false },
  { id: 'budgets', title: 'Spend against budgets', path: '/v1/budgets', curve: false },
];

/** The sections whose routes the server publishes. */
export function offeredSections(published: ReadonlySet<string>, sections: readonly OptionalSection[] = OPTIONAL_SECTIONS): OptionalSection[] {
  return sections.filter((s) => published.has(s.path));
}

type Row = Record<string, string | number | boolean | null>;

/** The rows of an answer: the first array of objects in it (depth first), flat values only. */
export function rowsOf(answer: unknown): Row[] {
  if (Array.isArray(answer)) {
    if (answer.length && answer.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) return answer.map(flat);
    return [];
  }
  if (answer !== null && typeof answer === 'object') {
    for (const v of Object.values(answer)) {
      const rows = rowsOf(v);
      if (rows.length) return rows;
    }
  }
  return [];
}

function flat(o: object): Row {
  const row: Row = {};
  for (const [k, v] of Object.entries(o)) row[k] = v === null || ['string', 'number', 'boolean'].includes(typeof v) ? (v as Row[string]) : JSON.stringify(v);
  return row;
}

/** A curve: x from the first numeric column, one series per other numeric column. */
export function curveOf(rows: Row[]): { x: string; xs: number[]; series: Array<{ name: string; values: number[] }> } | null {
  const first = rows[0];
  if (!first) return null;
  const numeric = Object.keys(first).filter((k) => rows.every((r) => typeof r[k] === 'number'));
  const [x, ...ys] = numeric;
  if (x === undefined || ys.length === 0) return null;
  return { x, xs: rows.map((r) => r[x] as number), series: ys.map((name) => ({ name, values: rows.map((r) => r[name] as number) })) };
}
