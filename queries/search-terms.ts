/**
 * What `q` of GET /v1/search asks for, and how each of its items is matched. Pure.
 *
 * `q` is terms and "quoted phrases", all of which must be found in one field. Matching is
 * case-insensitive and by whole tokens, as ClickHouse's text index splits text (runs of ASCII
 * letters and digits, and of any non-ASCII characters): a term `passwd` finds `/etc/passwd` but
 * not `mypasswd`; an item of several tokens (a phrase, or a term such as `/etc/passwd` or
 * `user@example.com`) must appear as written, starting and ending on token boundaries.
 *
 * Stored args and result summaries are JSON as Python's json.dumps writes it: a quote is `\"`,
 * every non-ASCII character a `\uXXXX` escape (`café` is `caf\u00e9`). So each item is also
 * looked for in that escaped form, and `"say \"hi\""` or `café` find what a user sees in the
 * value, whichever way the field holds it.
 */
import { pythonJsonString } from '../schemas/canonical-json.ts';

/** One form an item may take in a field: its tokens (for the index) and, for several tokens, the exact pattern. */
export interface SearchForm {
  tokens: string[];
  /** RE2 pattern of the form with token boundaries at its ends; null for a single token (matched as a token). */
  pattern: string | null;
  /** The form's text (lower-cased), for the excerpt. */
  text: string;
}

/** An item of q: a term or a phrase, and the forms it is matched in. */
export interface SearchItem {
  item: string;
  phrase: boolean;
  forms: SearchForm[];
}

/** Items a query may hold, and characters per item. */
export const MAX_SEARCH_ITEMS = 10;
export const MAX_SEARCH_ITEM_CHARS = 500;

// A token is a run of ASCII letters and digits or of anything non-ASCII (UTF-16 units ≥ 0x80): the
// bytes ClickHouse's splitByNonAlpha keeps together.
const TOKEN = /[a-z0-9\u0080-\uffff]+/g;
const isTokenChar = (c: string | undefined) => c !== undefined && /[a-z0-9\u0080-\uffff]/.test(c);
const RE2_SPECIAL = /[\\^$.|?*+()[\]{}]/g;
const BOUNDARY = '[^a-z0-9\\x{80}-\\x{10FFFF}]';

/** The form of a lower-cased text: its tokens and, when it has several or separators, its bounded pattern. */
function formOf(text: string): SearchForm | null {
  const tokens = text.match(TOKEN) ?? [];
  if (tokens.length === 0) return null;
  if (tokens.length === 1 && tokens[0] === text) return { tokens, pattern: null, text };
  const body = text.replace(RE2_SPECIAL, (c) => `\\${c}`);
  const pattern = `${isTokenChar(text[0]) ? `(?:^|${BOUNDARY})` : ''}${body}${isTokenChar(text[text.length - 1]) ? `(?:$|${BOUNDARY})` : ''}`;
  return { tokens: [...new Set(tokens)], pattern, text };
}

/** The items of `q`, or why it cannot be searched. */
export function parseSearch(q: string): { items: SearchItem[] } | { error: string } {
  const items: SearchItem[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(q); m !== null; m = re.exec(q)) {
    const phrase = m[1] !== undefined;
    const item = (m[1] ?? m[2] ?? '').trim();
    if (item.length === 0) continue;
    if (item.length > MAX_SEARCH_ITEM_CHARS) return { error: `q: an item is longer than ${MAX_SEARCH_ITEM_CHARS} characters` };
    const lower = item.toLowerCase();
    const raw = formOf(lower);
    if (!raw) return { error: `q: "${item.slice(0, 40)}" has no letter or digit to search for` };
    // As Python's json.dumps writes it inside a string (without the quotes around it), in lower
    // and in upper case: an escape keeps a letter's case (É is \u00c9, é is \u00e9) where
    // lower-casing the stored text folds only ASCII. A word of mixed case outside ASCII matches
    // only as written in one of the two.
    const escapedOf = (t: string) => formOf(pythonJsonString(t).slice(1, -1).replace(/[A-Z]/g, (c) => c.toLowerCase()));
    const forms = [raw];
    for (const f of [escapedOf(lower), escapedOf(item.toUpperCase())]) if (f && !forms.some((g) => g.text === f.text)) forms.push(f);
    items.push({ item, phrase, forms });
  }
  if (items.length === 0) return { error: 'q: give at least one term or "quoted phrase"' };
  if (items.length > MAX_SEARCH_ITEMS) return { error: `q: at most ${MAX_SEARCH_ITEMS} terms and phrases` };
  return { items };
}
