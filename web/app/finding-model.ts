/**
 * The pure parts of the finding pages (/violations, /hints, /quarantine, /manifests): their URLs,
 * a manifest entry's changes between versions, a tool's promises, a hint's evidence as text, and
 * where a quarantined packet came from. No DOM: tested on their own.
 */
import type { QuarantineRecord } from '../../queries/quarantine-schemas.ts';
import type { ManifestAnswer } from '../../schemas/answers.ts';

type Entry = ManifestAnswer['tools'][string];

/** A page's URL with its filters that are set, in the order given. Pure. */
export function pageHref(path: string, filters: Readonly<Record<string, string | number | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v !== undefined && v !== '') q.set(k, String(v));
  return q.size ? `${path}?${q}` : path;
}

/** The URL of the /violations page with these filters. Pure. */
export function violationsHref(f: { hours?: number; invariant?: string; task?: string; tool?: string; cursor?: string }): string {
  return pageHref('/violations', { hours: f.hours, invariant: f.invariant, task: f.task, tool: f.tool, cursor: f.cursor });
}

/** The URL of the /hints page with these filters. Pure. */
export function hintsHref(f: { hours?: number; kind?: string; cursor?: string }): string {
  return pageHref('/hints', { hours: f.hours, kind: f.kind, cursor: f.cursor });
}

/** The evidence's plain figures (numbers, strings, booleans; counts of lists and maps) as `name value` lines. Pure. */
export function evidenceFigures(evidence: Record<string, unknown>): string[] {
  return Object.entries(evidence).map(([k, v]) => {
    if (Array.isArray(v)) return `${k}: ${v.length} item${v.length === 1 ? '' : 's'}`;
    if (v !== null && typeof v === 'object') return `${k}: ${Object.entries(v as Record<string, unknown>).map(([a, b]) => `${a} ${typeof b === 'object' ? JSON.stringify(b) : String(b)}`).join(', ')}`;
    return `${k}: ${String(v)}`;
  });
}

/** The URL of the /quarantine page with these filters. Pure. */
export function quarantineHref(f: { hours?: number; reason?: string; cursor?: string; id?: string }): string {
  return pageHref('/quarantine', { hours: f.hours, reason: f.reason, cursor: f.cursor, id: f.id });
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

/** The URL of the /search page with these filters. Pure. */
export function searchHref(f: Partial<SearchFilters>): string {
  return pageHref('/search', { q: f.q, hours: f.hours, tool: f.tool, status: f.status, task: f.task, field: f.field, cursor: f.cursor });
}
