/**
 * The one pass every text gets before any detector runs: whether it holds something a detector or
 * a secret's name could start from (a candidate). Most strings of most calls hold none, and for
 * them this test is all redaction costs; the gates and detectors of secret-detectors.ts run only
 * on the rest. Pure.
 *
 * What is a candidate, and why it is enough (each is implied by a detector's match):
 * - a shape's fixed literal (`-----BEGIN`, `eyJ`, `AKIA`, `ghp_`, a provider's prefix …);
 * - `sk-` where a word boundary can be (the detectors start `\bsk-`): not inside `task-`, `disk-`;
 * - `Basic` or `Bearer` (any case) followed by white space or an escape's backslash;
 * - `://`, then a userinfo with a `:` and an `@` (url_password), not every URL;
 * - four digits in a row and nine more, single spaces or dashes between (a card number);
 * - a secret's word (password, token, key …, any case) that ends a word: a secret's name ends with
 *   one (secretName), the keyword detector wants one before a word boundary, and the detectors of
 *   aws_secret_access_key, AccountKey= and password= hold one; so `max_tokens` or `KeyError` are
 *   passed over;
 * - the Kelvin sign, which lower-cases to `k` in a name (secretName lower-cases before it splits).
 *
 * A candidate in a string is one in the JSON text that holds it, escapes included, save for
 * escapes that write an ASCII character or a Kelvin sign (`\u0041`, `\/`): {@link readsAsWritten}
 * tells those texts apart. The conditions before and after a literal allow for escapes (`\n`
 * before `sk-` reads as a boundary once decoded), and hold no `\b`, which an escape's letter
 * would hide.
 *
 * The literals are found by one loop over the text's pairs of characters, a table telling which
 * pairs start a check: measured on the ingest benchmark's strings (2 cores), 3 to 6 ns a
 * character, where one regular expression of them all took 10 to 13 (V8 tries the alternatives
 * of a large one in turn at each position).
 */

/** A literal to find, and what must be around it. */
export interface Anchor {
  /** The literal; lower case when `anyCase`. */
  text: string;
  anyCase?: true;
  /** A word boundary may be right before it (once escapes are read). */
  bound?: true;
  /** What must follow: no letter or digit; white space or a backslash; a URL's userinfo with a password. */
  then?: 'word-end' | 'space' | 'userinfo';
}

const esc = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A regular expression source matching any of the literals, written as a trie (one character class per position, not every literal in turn). */
export function literalsSource(xs: readonly string[]): string {
  const trie = (words: readonly string[]): string => {
    if (words.includes('')) return '';
    const byFirst = new Map<string, string[]>();
    for (const w of words) byFirst.set(w[0] as string, [...(byFirst.get(w[0] as string) ?? []), w.slice(1)]);
    const alts = [...byFirst].map(([c, rest]) => esc(c) + trie(rest));
    return alts.length === 1 ? (alts[0] as string) : `(?:${alts.join('|')})`;
  };
  return trie([...new Set(xs)]);
}

/** Where `\b` can be once the text is read: at its start, after no word's character, or after an escape (`\n`, `\u00e9`). */
const BOUND = '(?:^|[^A-Za-z0-9_]|\\\\[A-Za-z]|\\\\u[0-9A-Fa-f]{4})';
const THEN: Record<NonNullable<Anchor['then']>, string> = { 'word-end': '(?![A-Za-z0-9])', space: '(?=\\s|\\\\)', userinfo: '(?=[^\\s:/@]*:[^\\s@/]+@)' };

/** A card number's digits: four in a row, then nine more with single spaces or dashes between. */
const CARD_DIGITS = '\\d\\d\\d\\d(?:[ -]?\\d){9}';

/** The secrets' words, each where no letter or digit follows it. */
export const SECRET_WORD_ANCHORS: readonly Anchor[] = ['password', 'passwd', 'passphrase', 'pass', 'pwd', 'secret', 'token', 'key', 'authorization', 'cookie', 'credential', 'credentials'].map((text) => ({ text, anyCase: true, then: 'word-end' }));

/** The built-in shapes' anchors (gate 1 of secret-detectors.ts, with {@link CARD_DIGITS}). */
export const SHAPES: readonly Anchor[] = [
  ...['-----BEGIN', 'eyJ', 'AKIA', 'ASIA', 'ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_', 'xoxa-', 'xoxb-', 'xoxp-', 'xoxr-', 'xoxs-', 'AIza', 'sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'hf_', 'SG.'].map((text) => ({ text })),
  { text: 'sk-', bound: true },
  { text: 'basic', anyCase: true, then: 'space' },
  { text: 'bearer', anyCase: true, then: 'space' },
  { text: '://', then: 'userinfo' },
  // aws_secret_access_key, AccountKey=, password= (connection strings).
  ...SECRET_WORD_ANCHORS,
];

/** An anchor as a regular expression source: the literal, then its conditions as look-arounds. */
function anchorSource(a: Anchor): string {
  const lit = a.anyCase ? [...a.text].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : esc(c))).join('') : esc(a.text);
  return `${lit}${a.bound ? `(?<=${BOUND}${lit})` : ''}${a.then ? THEN[a.then] : ''}`;
}

/** A regular expression source matching any of the anchors (the card digits too when `card`). */
export function anchorsSource(anchors: readonly Anchor[], card = false): string {
  const plain = anchors.filter((a) => !a.anyCase && !a.bound && !a.then).map((a) => a.text);
  return [...(plain.length ? [literalsSource(plain)] : []), ...anchors.filter((a) => a.anyCase || a.bound || a.then).map(anchorSource), ...(card ? [CARD_DIGITS] : [])].join('|');
}

/** Frequent pairs of letters in English and code: a pair to look for is chosen among the others where it can be. */
const COMMON_PAIRS = new Set('th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo'.split(' '));

/** How often a pair of characters is met in ordinary text, roughly: common letter pairs, other letter pairs, the rest. */
const pairCost = (p: string) => (/^[a-z]{2}$/i.test(p) ? (COMMON_PAIRS.has(p.toLowerCase()) ? 2 : 1) : 0);

/** Every case of a pair of characters, for an anchor of any case. */
const cases = (p: string, anyCase: boolean): string[] =>
  anyCase ? [...new Set([p, p.toUpperCase(), `${p[0] as string}${(p[1] as string).toUpperCase()}`, `${(p[0] as string).toUpperCase()}${p[1] as string}`])] : [p];

interface Check {
  anchor: Anchor;
  /** Where the pair is in the literal. */
  at: number;
  /** The literal's conditions, sticky: tried where the literal starts (`bound`) or ends (`then`). */
  before?: RegExp;
  after?: RegExp;
}

const literalAt = (s: string, start: number, a: Anchor): boolean => {
  if (start < 0 || start + a.text.length > s.length) return false;
  if (!a.anyCase) return s.startsWith(a.text, start);
  for (let k = 0; k < a.text.length; k++) {
    const c = s.charCodeAt(start + k);
    const l = a.text.charCodeAt(k);
    // ASCII letters only, as a non-Unicode /i pattern folds them (the literals hold no backquote or other character that | 32 could make).
    if (c !== l && (c | 32) !== l) return false;
  }
  return true;
};

/** A character code as the table's index: ASCII as it is, any other as DEL (in no anchor). */
const fold = (c: number) => (c < 128 ? c : 127);

const sticky = (source: string) => new RegExp(source, 'y');

/**
 * A test of whether a text holds any of the anchors, or card digits, or a Kelvin sign: one loop
 * over its pairs of characters. Each anchor is looked for by one of its pairs, the least common;
 * where a pair of the table is met, its anchors are checked there.
 */
export function candidateTest(anchors: readonly Anchor[]): (text: string) => boolean {
  const table = new Uint8Array(1 << 14);
  const checks: Check[][] = [[]];
  for (const a of anchors) {
    if (a.text.length < 2) throw new Error(`anchor ${a.text} is shorter than a pair`);
    let at = 0;
    for (let k = 1; k + 1 < a.text.length; k++) if (pairCost(a.text.slice(k, k + 2)) < pairCost(a.text.slice(at, at + 2))) at = k;
    const check: Check = { anchor: a, at, ...(a.bound ? { before: sticky(`(?<=${BOUND})`) } : {}), ...(a.then ? { after: sticky(THEN[a.then]) } : {}) };
    for (const p of cases(a.text.slice(at, at + 2), a.anyCase === true)) {
      const i = (fold(p.charCodeAt(0)) << 7) | fold(p.charCodeAt(1));
      if (table[i] === 0) {
        if (checks.length > 255) throw new Error('more pairs than the table can tell apart');
        table[i] = checks.length;
        checks.push([]);
      }
      (checks[table[i] as number] as Check[]).push(check);
    }
  }
  const holds = (s: string, pairAt: number, list: readonly Check[]): boolean => {
    for (const c of list) {
      const start = pairAt - c.at;
      if (!literalAt(s, start, c.anchor)) continue;
      if (c.before) c.before.lastIndex = start;
      if (c.before && !c.before.test(s)) continue;
      if (c.after) c.after.lastIndex = start + c.anchor.text.length;
      if (c.after && !c.after.test(s)) continue;
      return true;
    }
    return false;
  };
  const card = new RegExp(CARD_DIGITS);
  // The loop over pairs alone, kept small: most texts never leave it, and with the checks inlined
  // into it, it ran several times slower.
  const nextPair = (s: string, from: number): number => {
    let prev = fold(s.charCodeAt(from - 1));
    for (let i = from; i < s.length; i++) {
      const c = fold(s.charCodeAt(i));
      if (table[(prev << 7) | c] !== 0) return i;
      prev = c;
    }
    return -1;
  };
  return (s) => {
    for (let i = s.length > 1 ? nextPair(s, 1) : -1; i >= 0; i = i + 1 < s.length ? nextPair(s, i + 1) : -1) {
      if (holds(s, i - 1, checks[table[(fold(s.charCodeAt(i - 1)) << 7) | fold(s.charCodeAt(i))] as number] as Check[])) return true;
    }
    return card.test(s) || s.includes('\u212A');
  };
}

/**
 * Escapes after which a string holds what its JSON text does not show: an ASCII character written
 * as `\u00XX` (printable ones: controls are in no anchor), a Kelvin sign, a `/` as `\/`.
 */
const HIDING_ESCAPE = /\\(?:u00[2-7]|u212[aA]|\/)/;

/**
 * Whether every string (and key) of this JSON text is, for the candidates, as the text writes
 * it: a candidate in a string is then one in the text, and a text without one has none in any
 * string.
 */
export const readsAsWritten = (json: string): boolean => !json.includes('\\') || !HIDING_ESCAPE.test(json);
