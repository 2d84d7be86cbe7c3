/**
 * How the pages print numbers and times (pure: shared by the browser code and the unit tests).
 * One place, so a waterfall bar, its table row and its tooltip say the same thing.
 */

/** Milliseconds as `850 ms`, `12.3 s`, `4 min 05 s`. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${String(s).padStart(2, '0')} s`;
}

/** USD with enough digits for sub-cent calls: `$0.0050`, `$1.23`, `–` for no cost. */
export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return '–';
  if (usd === 0) return '$0';
  return `$${usd.toFixed(Math.abs(usd) < 0.01 ? 4 : Math.abs(usd) < 100 ? 3 : 2)}`;
}

/** A share as a percentage with one decimal: `97.5%`. */
export function formatPct(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '–';
  return `${(share * 100).toFixed(1)}%`;
}

/** An integer with thousands separators. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** An ISO timestamp as `2026-05-04 13:22:01.123` UTC (what the API stores and the CLI prints). */
export function formatTime(iso: string): string {
  return iso.replace('T', ' ').replace('Z', '');
}

/** The first characters of a hash or id, for tables. */
export function short(id: string, n = 10): string {
  return id.length > n ? `${id.slice(0, n)}…` : id;
}
