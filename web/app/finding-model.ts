/**
 * The pure parts of the finding pages (/violations, /hints, /quarantine, /manifests): their URLs,
 * a manifest entry's changes between versions, a tool's promises, a hint's evidence as text, and
 * where a quarantined packet came from. No DOM: tested on their own.
 */
import type { QuarantineRecord } from '../../queries/quarantine-schemas.ts';
import type { ManifestAnswer } from '../../queries/schemas.ts';

type Entry = ManifestAnswer['tools'][string];

/** The URL of the page with these filters. Pure. */
export function violationsHref(f: { hours?: number; invariant?: string; task?: string; tool?: string; cursor?: string }): string {
  const q = new URLSearchParams();
  if (f.hours !== undefined) q.set('hours', String(f.hours));
  if (f.invariant) q.set('invariant', f.invariant);
  if (f.task) q.set('task', f.task);
  if (f.tool) q.set('tool', f.tool);
  if (f.cursor) q.set('cursor', f.cursor);
  return q.size ? `/violations?${q}` : '/violations';
}

/** The URL of the page with these filters. Pure. */
export function hintsHref(f: { hours?: number; kind?: string; cursor?: string }): string {
  const q = new URLSearchParams();
  if (f.hours !== undefined) q.set('hours', String(f.hours));
  if (f.kind) q.set('kind', f.kind);
  if (f.cursor) q.set('cursor', f.cursor);
  return q.size ? `/hints?${q}` : '/hints';
}

/** The evidence's plain figures (numbers, strings, booleans; counts of lists and maps) as `name value` lines. Pure. */
export function evidenceFigures(evidence: Record<string, unknown>): string[] {
  return Object.entries(evidence).map(([k, v]) => {
    if (Array.isArray(v)) return `${k}: ${v.length} item${v.length === 1 ? '' : 's'}`;
    if (v !== null && typeof v === 'object') return `${k}: ${Object.entries(v as Record<string, unknown>).map(([a, b]) => `${a} ${typeof b === 'object' ? JSON.stringify(b) : String(b)}`).join(', ')}`;
    return `${k}: ${String(v)}`;
  });
}

/** The page's URL with these filters. Pure. */
export function quarantineHref(f: { hours?: number; reason?: string; cursor?: string; id?: string }): string {
  const q = new URLSearchParams();
  if (f.hours !== undefined) q.set('hours', String(f.hours));
  if (f.reason) q.set('reason', f.reason);
  if (f.cursor) q.set('cursor', f.cursor);
  if (f.id) q.set('id', f.id);
  return q.size ? `/quarantine?${q}` : '/quarantine';
}

/** Where a packet came from, in one line. Pure. */
export function sourceText(r: QuarantineRecord): string {
  const s = r.source;
  return s.kind === 'kafka' ? `Kafka ${s.topic ?? '?'}/${s.partition ?? '?'}@${s.offset ?? '?'}` : `HTTP request ${s.request_id ?? '?'}`;
}

/** One field that differs between two versions of an entry. */
export interface FieldChange {
  field: string;
  before: string;
  after: string;
}

const shown = (v: unknown): string => (v === undefined ? '(absent)' : JSON.stringify(v));

/**
 * The fields of an entry that differ from the version before (null: the tool was not declared),
 * in the entry's field order, values as JSON. Pure.
 */
export function entryDiff(before: Entry | null, after: Entry | null): FieldChange[] {
  if (before === null && after === null) return [];
  if (before === null) return [{ field: '(tool)', before: 'not declared', after: 'declared' }];
  if (after === null) return [{ field: '(tool)', before: 'declared', after: 'not declared' }];
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return fields.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f])).map((f) => ({ field: f, before: shown(b[f]), after: shown(a[f]) }));
}

/** The tags of an entry's promises, as short words. Pure. */
export function promises(e: Entry): string {
  const words = [
    e.idempotent ? 'idempotent' : '',
    e.requires_approval ? 'requires approval' : '',
    e.accesses_private_data ? 'private data' : '',
    e.receives_untrusted_input ? 'untrusted input' : '',
    e.communicates_externally ? 'external' : '',
    e.billable ? 'billable' : '',
  ];
  return words.filter(Boolean).join(', ') || '–';
}


/** The search page's query and filters, as its URL holds them. */
export interface SearchFilters {
  q: string;
  hours: number;
  tool: string;
  status: string;
  task: string;
  field: string;
  cursor: string;
}

/** The URL of the search page. Pure. */
export function searchHref(f: Partial<SearchFilters>): string {
  const q = new URLSearchParams();
  for (const k of ['q', 'hours', 'tool', 'status', 'task', 'field', 'cursor'] as const) {
    const v = f[k];
    if (v !== undefined && v !== '') q.set(k, String(v));
  }
  return q.size ? `/search?${q}` : '/search';
}
