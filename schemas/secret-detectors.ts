/**
 * Secret detectors: where a string holds a credential, by the kinds secret
 * scanners (gitleaks, detect-secrets) know — provider API keys, authorization values, JWTs, PEM
 * private keys, passwords in URLs and connection strings, card numbers (Luhn-checked), and e-mail
 * addresses as an opt-in — plus custom patterns. Pure: the keyed placeholder is computed here with
 * node:crypto's HMAC, no I/O. Applied through redaction-policy.ts by the emitters, the MCP gateway
 * and ingest to args, summaries, errors, contents and quarantined bytes (docs/design.md, "Secrets").
 */
import { createHmac } from 'node:crypto';
import { anchorsSource, candidateTest, literalsSource, readsAsWritten, SECRET_WORD_ANCHORS, SHAPES } from './secret-candidates.ts';
import { PROVIDER_RULES } from './secret-providers.ts';

export { readsAsWritten };

/** A span of `text` to replace, and the rule that found it. */
export interface SecretHit {
  rule: string;
  start: number;
  end: number;
}

/**
 * A detector: a pattern, the group holding the secret (0: the whole match), an optional check of
 * it, and the group holding the name it is assigned to, which must be a secret's name
 * ({@link secretName}).
 */
interface Detector {
  rule: string;
  /** A literal the text must hold for the pattern to match (tested first: most texts lack it). */
  need?: RegExp;
  pattern: RegExp;
  group?: number;
  check?: (secret: string) => boolean;
  name?: number;
  /** Tried only where a secret's keyword is in the text ({@link KEYWORD_GATE}), not a shape's literal. */
  keyword?: true;
  /**
   * Literals one of which must be in the text (case as written), found for every such detector in
   * one scan of them all (the providers' prefixes, the commands of cli_password): tried only then.
   */
  provider?: readonly string[];
}

/** What every secret word below holds (case folded). */
const NAME_WORD = /pass|pwd|secret|token|key|authorization|cookie|credential/i;

/** Last words of a name that make its value a secret (after camelCase and separators are split). */
const SECRET_WORDS = new Set(['password', 'passwd', 'pwd', 'pass', 'passphrase', 'secret', 'token', 'apikey', 'authorization', 'cookie', 'credential', 'credentials', 'privatekey', 'accesskey', 'secretkey', 'clientsecret']);
/** Last two words that do. */
const SECRET_PAIRS = new Set(['api_key', 'access_key', 'private_key', 'secret_key', 'client_secret', 'account_key', 'signing_key', 'encryption_key', 'key_data']);
/** Tokens that are not credentials: pagination and continuation cursors. */
const CURSOR_WORDS = new Set(['page', 'next', 'continuation', 'sync', 'pagination', 'resume', 'cursor']);

/**
 * Whether a name (an object key, a header, an environment variable, a command-line option) says
 * its value is a secret: its last word is one of password, passwd, pwd, pass, passphrase, secret,
 * token, apikey, authorization, cookie, credential(s), or its last two api/access/private/secret/
 * account/signing/encryption + key, client + secret, key + data — words split at `_`, `-`, `.`,
 * spaces and camelCase, case-insensitive (`X-Api-Key`, `DB_PASSWORD`, `clientSecret`, `Set-Cookie`),
 * or a last word ending with password, passwd, passphrase, secret or apikey (`PGPASSWORD`). Not
 * `max_tokens`, `token_count`, `bypass`, nor a pagination `page_token` or `nextToken`.
 */
export function secretName(name: string): boolean {
  // Every secret word holds one of NAME_WORD's: most names are tested by that alone.
  if (name.length > 100 || !NAME_WORD.test(name)) return false;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
  const last = words.at(-1);
  if (last === undefined) return false;
  if (last === 'token' && words.length > 1 && CURSOR_WORDS.has(words.at(-2) as string)) return false;
  return SECRET_WORDS.has(last) || SECRET_SUFFIX.test(last) || (words.length > 1 && SECRET_PAIRS.has(`${words.at(-2) as string}_${last}`));
}

/** A last word that ends with one of these is a secret's too, written as one word: PGPASSWORD, dbpasswd. */
const SECRET_SUFFIX = /(?:password|passwd|passphrase|secret|apikey)$/;

/** What to look for besides the built-in kinds. */
export interface DetectOptions {
  /** E-mail addresses too (personal data rather than a credential: off by default). */
  email?: boolean;
  /** Patterns of one's own (a `g` flag is added); the whole match is the secret. */
  custom?: ReadonlyArray<{ rule: string; pattern: RegExp }>;
  /**
   * The gates ({@link scanGates}) a text may open, when it is known to be part of a larger one whose
   * gates were taken (a string of a JSON text without escapes): the others are not looked for.
   */
  gates?: number;
}

const base64Decodes = (s: string, test: (text: string) => boolean): boolean => {
  try {
    return test(Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8'));
  } catch {
    return false;
  }
};

/** Luhn checksum of a run of digits (spaces and dashes ignored). */
export function luhnValid(number: string): boolean {
  const digits = number.replace(/[ -]/g, '');
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length >= 13 && sum % 10 === 0;
}

/** The words a secret's name ends with, as text (the prefilter of {@link namesSecret}). */
const NAME_PREFILTER = /pass|pwd|secret|token|key|authorization|cookie|credential/i;

/**
 * Whether JSON text holds a string that names a secret ({@link secretName}) as a key or as the
 * first of a pair (`"X-Api-Key", "…"`): the value beside it is then redacted whole, though no
 * detector matches it. What lets a redactor skip the walk of a value without one.
 */
export function namesSecret(json: string): boolean {
  if (!NAME_PREFILTER.test(json)) return false;
  for (const m of json.matchAll(/"([^"\\]{1,100})"\s*[:,]/g)) if (secretName(m[1] as string)) return true;
  return false;
}

/**
 * Whether text may hold a secret at all: something a detector or a secret's name starts from
 * (secret-candidates.ts; or an e-mail or custom pattern asked for). One pass, where
 * {@link findSecrets} costs several: most texts hold nothing of the kind. Also true of a JSON
 * text whose strings may hold one, when {@link readsAsWritten} holds for it.
 */
export function mayHoldSecret(text: string, o: DetectOptions = {}): boolean {
  return (o.custom?.length ?? 0) > 0 || (o.email === true && text.includes('@')) || isCandidate(text);
}

/** Whether the digits of a JSON number are a card number of a major scheme that passes Luhn. */
export function isCardNumber(digits: string): boolean {
  return /^(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|3[47]\d{2}|6(?:011|5\d{2}))\d{9,15}$/.test(digits) && luhnValid(digits);
}

/** HTTP authentication scheme names: the word after `Authorization:`, not the credentials. */
const AUTH_SCHEME = /^(?:basic|bearer|digest|token|negotiate|ntlm|hoba|mutual|vapid|scram-sha-\d+|aws4-hmac-sha256)$/i;

// Order matters where kinds overlap: the first detector to claim a span keeps it (an Anthropic key
// also looks like an OpenAI one; a JWT in a Bearer header is a JWT).
const BUILT_IN: readonly Detector[] = [
  { rule: 'private_key', need: /-----BEGIN/, pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g },
  { rule: 'jwt', need: /eyJ/, pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, check: (t) => base64Decodes(t.slice(0, t.indexOf('.')), (h) => /"alg"\s*:/.test(h)) },
  { rule: 'anthropic_key', need: /sk-ant-/, pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  // Providers' shapes (secret-providers.ts): before the OpenAI key and Bearer, which would take
  // some of them (sk-lf-, sk-or-v1-; a provider token after `Bearer`) under a vaguer rule.
  ...PROVIDER_RULES.map((r): Detector => ({ rule: r.rule, provider: r.need, pattern: new RegExp(r.pattern, 'g'), ...(r.group ? { group: r.group } : {}) })),
  { rule: 'openai_key', need: /sk-/, pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, check: (t) => /[0-9]/.test(t) && /[A-Za-z]/.test(t.slice(3)) },
  { rule: 'aws_access_key', need: /AKIA|ASIA/, pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { rule: 'aws_secret_key', need: /aws_secret_access_key/i, pattern: /aws_secret_access_key["']?\s*[=:]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi, group: 1 },
  { rule: 'github_token', need: /gh[pousr]_|github_pat_/, pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { rule: 'slack_token', need: /xox[abprs]-/, pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { rule: 'google_api_key', need: /AIza/, pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { rule: 'stripe_key', need: /[sr]k_(?:live|test)_/, pattern: /\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b/g },
  { rule: 'huggingface_token', need: /hf_/, pattern: /\bhf_[A-Za-z0-9]{34,40}\b/g },
  { rule: 'sendgrid_key', need: /SG\./, pattern: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  { rule: 'azure_storage_key', need: /AccountKey=/, pattern: /\bAccountKey=([A-Za-z0-9+/]{86,88}={0,2})/g, group: 1 },
  // Basic: base64 of user:password, in any case. Bearer: an opaque token of 20+ characters with a
  // digit, or with both cases of letters (a word of prose has neither).
  { rule: 'basic_auth', need: /basic/i, pattern: /\bBasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/gi, group: 1, check: (t) => base64Decodes(t, (s) => /^[^:\s]+:\S+$/.test(s)) },
  { rule: 'bearer_token', need: /bearer/i, pattern: /\bBearer\s+([A-Za-z0-9._~+/-]{20,}=*)/gi, group: 1, check: (t) => /[0-9]/.test(t) || (/[a-z]/.test(t) && /[A-Z]/.test(t)) },
  // A password in a URL's userinfo, with or without a user (redis://:pw@host).
  { rule: 'url_password', need: /:\/\//, pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:([^\s@/]+)@/gi, group: 1 },
  { rule: 'connection_password', need: /passw|pwd/i, pattern: /\b(?:password|passwd|pwd)\s*[=:]\s*(?!\s)("?)([^\s;"'&,]{3,})\1/gi, group: 2 },
  // ~/.netrc: machine HOST [login USER] password PASSWORD (whitespace-separated, one line or several).
  { rule: 'netrc_password', provider: ['machine'], pattern: /\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(\S+)/g, group: 1 },
  // Commands whose -p (or curl's -u user:) is a password: mysql -pSECRET, docker login -p SECRET,
  // sshpass -p SECRET, az login -p SECRET. Not -p elsewhere (mkdir -p, ssh -p PORT, psql -p PORT).
  { rule: 'cli_password', provider: ['mysql', 'mariadb', 'login', 'sshpass'], pattern: /\b(?:mysql(?:dump|admin)?|mariadb|(?:docker|podman|helm registry|oras|az) login|sshpass)\b[^\n|;&]*?\s-p[ \t]*(["']?)([^\s"'&;|-][^\s"'&;|]{2,})\1/g, group: 2 },
  { rule: 'cli_password', provider: ['curl'], pattern: /\bcurl\b[^\n|;&]*?\s(?:-u|--user)[ \t]*(["']?)[^\s:"']+:([^\s"'&;|]{3,})\1/g, group: 2 },
  // NAME=value, NAME: value, export NAME="value", --name value, --name=value, where the name is a
  // secret's ({@link secretName}): environment dumps, shell commands, configs, query strings.
  // (`Authorization: Bearer …`: the scheme is no secret; the detectors above take what follows it.)
  // NAME and its value on one line: a YAML key with nothing after it is no assignment of the next.
  { rule: 'secret_assignment', pattern: /(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]{0,99})["']?[^\S\n\r\u2028\u2029]*[=:][^\S\n\r\u2028\u2029]*(["']?)([^\s"'&;|,]{3,})\2/g, group: 3, name: 1, check: (t) => !AUTH_SCHEME.test(t) },
  { rule: 'secret_assignment', pattern: /(?<![A-Za-z0-9_-])--([A-Za-z][A-Za-z0-9-]{0,99})(?:=|\s+)(["']?)([^\s"'&;|]{3,})\2/g, group: 3, name: 1 },
  // A random-looking token shortly after a secret's keyword ("my api key is 9fK2…", "the deploy
  // token was Zx8C…"), as detect-secrets pairs keywords with entropy: 20+ characters of a key's
  // alphabet, with letters and digits, at least 10 of them different — counted, not a Shannon
  // entropy, so that the Python emitter decides every case alike (no floating point).
  { rule: 'keyword_secret', keyword: true, pattern: /\b(?:password|passwd|passphrase|secret|token|api[ _-]?key|access[ _-]?key|credentials?)\b[^\n\r]{0,24}?(?<![A-Za-z0-9+/_=-])([A-Za-z0-9+/_=-]{20,})(?![A-Za-z0-9+/_=-])/gi, group: 1, check: (t) => /[0-9]/.test(t) && /[A-Za-z]/.test(t) && new Set(t).size >= 10 },
  // Card numbers of the major schemes (Visa, Mastercard, Amex, Discover) passing Luhn; 13–19 digits.
  { rule: 'card_number', need: /\d(?:[ -]?\d){12}/, pattern: /\b(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|3[47]\d{2}|6(?:011|5\d{2}))(?:[ -]?\d){9,15}\b/g, check: luhnValid },
];

/**
 * Text no built-in detector can match has none of these ({@link SHAPES}): the literal each
 * pattern starts with or must contain, or 13 digits with single spaces or dashes (a card number),
 * or a secret's word (the detectors of aws_secret_access_key, AccountKey and passwords). The
 * detectors of assignments instead need a secret's name in the text. One pass of this instead of
 * fifteen: most strings of most calls hold no secret, and ingest runs the detectors over every
 * string of every packet.
 */
const BUILT_IN_PREFILTER = new RegExp(anchorsSource(SHAPES, true));
/** The providers' prefixes and the commands of cli_password (case as written), all found in one pass. */
const PROVIDER_LITERALS = [...new Set([...PROVIDER_RULES.flatMap((r) => r.need), 'machine', 'mysql', 'mariadb', 'login', 'sshpass', 'curl'])];
// The scan reports the shorter of two literals one of which extends the other: none may.
for (const a of PROVIDER_LITERALS) for (const b of PROVIDER_LITERALS) if (a !== b && b.startsWith(a)) throw new Error(`provider literal ${a} is a prefix of ${b}`);
const PROVIDER_SCAN = new RegExp(literalsSource(PROVIDER_LITERALS), 'g');
const PROVIDER_SCAN_ONE = new RegExp(literalsSource(PROVIDER_LITERALS));
/** Anything a detector or a secret's name can start from (secret-candidates.ts): one pass, and most texts end there. */
const isCandidate = candidateTest([...SHAPES, ...PROVIDER_LITERALS.filter((l) => !l.startsWith('sk-')).map((text) => ({ text }))]);
/**
 * What a text must hold for any provider literal to be in it: a character of theirs that ordinary
 * words lack, or one of the literals without one. Words and numbers (most strings of a call) are
 * then passed over by one scan of a character class instead of the literals' trie.
 */
const PROVIDER_MARK = /[_\-.~:/]|ATATT3|dapi|EAAA|machine|mysql|mariadb|login|sshpass|curl/;
for (const l of PROVIDER_LITERALS) if (!PROVIDER_MARK.test(l)) throw new Error(`provider literal ${l} escapes PROVIDER_MARK`);

/** Whether `text` holds a provider literal. */
const hasProviderLiteral = (text: string): boolean => PROVIDER_MARK.test(text) && PROVIDER_SCAN_ONE.test(text);

/** The providers' literals in `text` (each detector of theirs then runs only where its own is). */
function providerLiterals(text: string): Set<string> | undefined {
  if (!hasProviderLiteral(text)) return undefined;
  const found = new Set<string>();
  for (const m of execAll(PROVIDER_SCAN, text)) found.add(m[0]);
  return found;
}

/** The names around a secret word ({@link mentionsSecretName}). */
const NAME_CANDIDATE = /[A-Za-z0-9_.-]*(?:pass|pwd|secret|token|key|authorization|cookie|credential)[A-Za-z0-9_.-]*/gi;

/**
 * Whether text names a secret somewhere (`OPENAI_API_KEY`, `--api-token`): the detectors of
 * assignments run only then. Words such as `max_tokens` or `cache_key` are common in ordinary args
 * and are no secret's names; testing the name first keeps them from costing every detector's pass.
 */
function mentionsSecretName(text: string): boolean {
  for (const m of execAll(NAME_CANDIDATE, text)) if (secretName(m[0])) return true;
  return false;
}

/** A secret's word that ends a word: what a secret's name and the keyword detector both hold. */
const SECRET_WORD_END = new RegExp(anchorsSource(SECRET_WORD_ANCHORS));

/** Where the keyword detector can match: a secret's keyword as a word of the text. */
const KEYWORD_GATE = /\b(?:password|passwd|passphrase|secret|token|api[ _-]?key|access[ _-]?key|credentials?)\b/i;

/**
 * The built-in detectors that can apply, in their order, by the gates a text opens (bit 1: a
 * shape's literal, 2: a secret's name, 4: a keyword, 8: a provider's literal): chosen by index,
 * not filtered per text.
 */
const BY_GATES: ReadonlyArray<readonly Detector[]> = Array.from({ length: 16 }, (_, g) =>
  BUILT_IN.filter((d) => (d.provider ? g & 8 : d.keyword ? g & 4 : d.name !== undefined ? g & 2 : g & 1) !== 0),
);

const NONE: readonly Detector[] = [];

/**
 * The matches of a global pattern in `text`, by exec on the pattern itself: matchAll copies the
 * pattern for every text, which with some 80 detectors and prefilters was a fifth of redaction's
 * time. Callers do not interleave two runs of one pattern (each finishes, or is dropped).
 */
function* execAll(pattern: RegExp, text: string): Generator<RegExpExecArray> {
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m[0] === '') pattern.lastIndex++;
    yield m;
  }
}
const EMAIL: Detector = { rule: 'email', pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g };

/** A custom pattern as matchAll needs it: global (compiled once by a Redactor; here only when it is not). */
const globalOf = (p: RegExp): RegExp => (p.global ? p : new RegExp(p.source, `${p.flags}g`));

/**
 * Every confirmed match of the detectors that can apply to `text`, detector by detector. They read
 * it with the escapes `\n`, `\t`, `\r` as white space of the same length: JSON written into a
 * string (args often carry a config or a body so) puts `\n` right before a key, where no word
 * boundary would be found; the spans are the text's own.
 */
function* secretMatches(raw: string, o: DetectOptions, known?: TextGates): Generator<SecretHit> {
  const text = raw.includes('\\') ? raw.replace(/\\[ntr]/g, '  ') : raw;
  const { gates, providers } = known ?? scanGates(text, o.gates);
  const extra: readonly Detector[] = o.email || o.custom?.length ? [...(o.email && text.includes('@') ? [EMAIL] : []), ...(o.custom ?? []).map((c) => ({ rule: c.rule, pattern: globalOf(c.pattern) }))] : NONE;
  for (const list of [BY_GATES[gates] as readonly Detector[], extra]) {
    for (const d of list) {
      if (d.provider ? !d.provider.some((n) => providers?.has(n)) : d.need !== undefined && !d.need.test(text)) continue;
      for (const m of execAll(d.pattern, text)) {
        const secret = m[d.group ?? 0];
        if (secret === undefined || secret === '' || (d.check && !d.check(secret))) continue;
        if (d.name !== undefined && !(secretName(m[d.name] ?? '') && !isPlaceholder(secret))) continue;
        const start = (m.index ?? 0) + (d.group ? m[0].lastIndexOf(secret) : 0);
        yield { rule: d.rule, start, end: start + secret.length };
      }
    }
  }
}

/** The gates a text opens ({@link scanGates}), and the providers' literals found in it. */
export interface TextGates {
  gates: number;
  providers?: Set<string> | undefined;
}

/**
 * The gates a text opens, as bits: 1 a shape's literal, 2 a secret's name, 4 a secret's keyword,
 * 8 a provider's literal; only the detectors behind an open gate can match. Each is a substring's
 * property: a string of a JSON text (no escapes in it) opens only gates the whole text opens.
 * `allowed`: the gates to look for (default all).
 */
export function scanGates(text: string, allowed = 15): TextGates {
  // Most texts hold no candidate at all: one pass, no gate open.
  if (allowed === 0 || !isCandidate(text)) return { gates: 0 };
  // A secret's name and a keyword both end with a secret's word: one test of it spares the other two most texts.
  const word = (allowed & 6) !== 0 && SECRET_WORD_END.test(text);
  const providers = (allowed & 8) !== 0 ? providerLiterals(text) : undefined;
  const gates =
    ((allowed & 1) !== 0 && BUILT_IN_PREFILTER.test(text) ? 1 : 0) |
    (word && (allowed & 2) !== 0 && mentionsSecretName(text) ? 2 : 0) |
    (word && (allowed & 4) !== 0 && KEYWORD_GATE.test(text) ? 4 : 0) |
    (providers ? 8 : 0);
  return { gates, providers };
}

/** The secrets in `text`: non-overlapping spans in text order, the first detector's claim kept. */
export function findSecrets(text: string, o: DetectOptions = {}): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const h of secretMatches(text, o)) if (!hits.some((x) => h.start < x.end && x.start < h.end)) hits.push(h);
  return hits.sort((a, b) => a.start - b.start);
}

/** Whether `text` holds a secret: {@link findSecrets} stopped at the first. */
export function hasSecret(text: string, o: DetectOptions = {}, known?: TextGates): boolean {
  return !secretMatches(text, o, known).next().done;
}

/**
 * The placeholder of a secret: its rule and the first 16 hex digits of HMAC-SHA-256(key, secret).
 * The same secret gives the same placeholder (repeated calls stay repeats), and a short secret
 * cannot be guessed back from it without the key.
 */
export function secretMark(key: string | Uint8Array, rule: string, secret: string): string {
  return `[redacted:${rule}:${createHmac('sha256', key).update(secret, 'utf8').digest('hex').slice(0, 16)}]`;
}

/** A placeholder {@link secretMark} made: redacting it again must leave it as it is. */
export const PLACEHOLDER = /\[redacted:([a-z0-9_]+):[0-9a-f]{16}\]/g;

const WHOLE_PLACEHOLDER = new RegExp(`^${PLACEHOLDER.source}$`);
/** True when the whole text is one placeholder. */
export const isPlaceholder = (s: string): boolean => WHOLE_PLACEHOLDER.test(s);

/**
 * `text` with every secret replaced by `mark(rule, secret)`, and the rules that fired (each once,
 * in order). Placeholders already in it are left alone (none of their digits is a card number):
 * redacting twice — at the emitter, then at ingest — gives the text redacting once gave.
 */
export function redactString(text: string, mark: (rule: string, secret: string) => string, o: DetectOptions = {}): { text: string; rules: string[] } {
  if (!mayHoldSecret(text, o)) return { text, rules: [] };
  const marks = text.includes('[redacted:') ? [...text.matchAll(PLACEHOLDER)].map((m) => [m.index, m.index + m[0].length] as const) : [];
  const hits = findSecrets(text, o).filter((h) => !marks.some(([s, e]) => h.start < e && s < h.end));
  if (hits.length === 0) return { text, rules: [] };
  let out = '';
  let at = 0;
  for (const h of hits) {
    out += text.slice(at, h.start) + mark(h.rule, text.slice(h.start, h.end));
    at = h.end;
  }
  return { text: out + text.slice(at), rules: [...new Set(hits.map((h) => h.rule))] };
}
