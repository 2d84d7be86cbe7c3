/**
 * The time window of a list page: the last `hours` (from the page's ?hours=, default 24),
 * offered as a small choice (dom.ts windowPicker) that keeps the page URL shareable. Pure.
 */

/** Hours a page can look back. */
export const HOUR_CHOICES = [1, 6, 24, 168, 720] as const;
/** Default look-back of the list pages. */
export const DEFAULT_HOURS = 24;

/** The page's look-back in hours. */
export function hoursOf(search: URLSearchParams): number {
  const h = Number(search.get('hours'));
  return (HOUR_CHOICES as readonly number[]).includes(h) ? h : DEFAULT_HOURS;
}

/** from/to of the last `hours`, as the read API takes them. */
export function lastHours(hours: number, now = Date.now()): { from: string; to: string } {
  return { from: new Date(now - hours * 3_600_000).toISOString(), to: new Date(now).toISOString() };
}
