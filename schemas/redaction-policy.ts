/**
 * A deployment's redaction policy, applied the same way by every entry path: the
 * TypeScript emitter and the MCP gateway before a packet leaves the agent's process, ingest as the
 * safety net for producers that do not redact. Pure (the placeholder's HMAC is node:crypto, no
 * I/O). A policy is plain data — the key, options and pattern sources — so it crosses into decode
 * threads as it is.
 *
 * What is stored records where secrets were taken out by the placeholders themselves
 * (`[redacted:<rule>:<16 hex>]`, {@link placeholdersIn}): a call redacted by its emitter and the same
 * call redacted at ingest store the same text, so they have the same args_hash and fingerprint,
 * dedup together, and list the same redactions.
 */
import type { JsonValue } from './canonical-json.ts';
import { argsHash, contentSample, sha256Hex, utf8ByteLength } from './hashing.ts';
import { hasSecret, mayHoldSecret, namesSecret, PLACEHOLDER, readsAsWritten, scanGates, secretMark, type DetectOptions } from './secret-detectors.ts';
import { escapePointer, redactJson, redactText, type Redaction } from './secret-redaction.ts';

/** What to redact and with which key. */
export interface RedactionPolicy {
  /** HMAC key of the placeholders: the same in every process that redacts, emitters included. */
  key: string;
  /** E-mail addresses too (off by default: personal data rather than a credential). */
  email?: boolean;
  /**
   * Values replaced whole, per tool_id (`*`: every tool), as dot paths from the call's fields:
   * `args.password`, `args.headers.*`, `result_summary.token`.
   */
  paths?: Readonly<Record<string, readonly string[]>>;
  /** Patterns of one's own: the whole match is the secret. */
  patterns?: ReadonlyArray<{ rule: string; source: string; flags?: string }>;
}


/**
 * Where the placeholders in a value are, by rule: each (pointer, rule) once, sorted by pointer
 * then rule — not in the value's key order, which differs between producers of the same call.
 */
export function placeholdersIn(value: unknown, at = ''): Redaction[] {
  const out: Redaction[] = [];
  const seen = new Set<string>();
  const walk = (v: unknown, pointer: string): void => {
    if (typeof v === 'string') {
      if (!v.includes('[redacted:')) return;
      for (const m of v.matchAll(PLACEHOLDER)) {
        const id = `${pointer}\u0000${m[1] as string}`;
        if (!seen.has(id)) out.push({ pointer, rule: m[1] as string });
        seen.add(id);
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${pointer}/${i}`));
    else if (v !== null && typeof v === 'object' && isPlain(v)) {
      for (const [k, x] of Object.entries(v)) {
        // A key that held a secret is a placeholder where it is.
        if (k.includes('[redacted:')) walk(k, `${pointer}/${escapePointer(k)}`);
        walk(x, `${pointer}/${escapePointer(k)}`);
      }
    }
  };
  walk(value, at);
  return out.sort((x, y) => (x.pointer === y.pointer ? cmp(x.rule, y.rule) : cmp(x.pointer, y.pointer)));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** Applies a {@link RedactionPolicy}. */
export class Redactor {
  private readonly detect: DetectOptions;
  private readonly mark: (rule: string, secret: string) => string;
  /** The detection options of a walk when no text opened a gate (paths still replaced). */
  private readonly noGates: DetectOptions;

  constructor(readonly policy: RedactionPolicy) {
    // Compiled once, global as matchAll needs them: a pattern per string of every packet otherwise.
    this.detect = { email: policy.email ?? false, custom: (policy.patterns ?? []).map((p) => ({ rule: p.rule, pattern: new RegExp(p.source, (p.flags ?? '').includes('g') ? (p.flags ?? '') : `${p.flags ?? ''}g`) })) };
    this.mark = (rule, secret) => secretMark(policy.key, rule, secret);
    this.noGates = { ...this.detect, gates: 0 };
  }

  /** The paths replaced whole in a tool's calls (none when the policy has none: most deployments). */
  private pathsOf(toolId: string): readonly string[] {
    const p = this.policy.paths;
    if (p === undefined) return NO_PATHS;
    const all = p['*'] ?? NO_PATHS;
    const own = p[toolId] ?? NO_PATHS;
    return own.length === 0 ? all : all.length === 0 ? own : [...all, ...own];
  }

  /**
   * True when no string of this JSON text can hold a secret, by one pass over it: it holds no
   * candidate (secret-candidates.ts), and its escapes hide none ({@link readsAsWritten}).
   */
  private clear(json: string): boolean {
    return readsAsWritten(json) && !mayHoldSecret(json, this.detect);
  }

  /**
   * A text with its secrets replaced; the same text when it holds none. A text that is a JSON
   * array or object (an error carrying a response body) is judged as JSON.
   */
  text(s: string): string {
    return redactText(s, this.mark, this.detect);
  }

  /**
   * True when no string inside these JSON texts can hold a secret: a string's characters are in
   * its text (escapes aside: {@link readsAsWritten}), so no candidate or match in the text means
   * none in any string. Most values of most packets hold none, and the walk copies the whole value.
   */
  private holdsNone(...json: string[]): boolean {
    return this.scan(...json).none;
  }

  /**
   * Whether these JSON texts can hold no secret ({@link holdsNone}), and the detection options for
   * their strings: only the gates the texts open ({@link scanGates}: a string without escapes
   * opens none its text does not), so a walk does not scan every string for what the whole text
   * lacks. Each text is scanned once. All gates when a text has an escape and a candidate.
   */
  private scan(...json: string[]): { none: boolean; detect: DetectOptions } {
    // One pass over each text: most hold nothing a detector or a secret's name starts from.
    if (json.every((t) => this.clear(t))) return { none: true, detect: this.noGates };
    if (json.some((t) => t.includes('\\'))) return { none: false, detect: this.detect };
    const known = json.map((t) => scanGates(t));
    const detect = { ...this.detect, gates: known.reduce((g, k) => g | k.gates, 0) };
    const none = json.every((t, i) => !namesSecret(t) && !hasSecret(t, this.detect, known[i]));
    return { none, detect };
  }

  /**
   * The call's args and result summary with their secrets replaced and the tool's paths replaced
   * whole; `changed` false (and the same objects) when nothing was. `json`: their JSON texts when
   * the caller has them, so a call without a secret (and a tool without paths) is not walked.
   */
  call(toolId: string, fields: { args: unknown; result_summary: unknown }, json?: { args: string; summary: string }): { args: unknown; result_summary: unknown; changed: boolean } {
    const paths = this.pathsOf(toolId);
    // The common case, a call whose texts hold no candidate, costs one pass over each and no allocation.
    if (paths.length === 0 && json && this.clear(json.args) && this.clear(json.summary)) return { args: fields.args, result_summary: fields.result_summary, changed: false };
    const scanned = json ? this.scan(json.args, json.summary) : { none: false, detect: this.detect };
    if (paths.length === 0 && scanned.none) return { args: fields.args, result_summary: fields.result_summary, changed: false };
    const r = redactJson(fields, this.mark, { ...scanned.detect, paths });
    if (r.redactions.length === 0) return { args: fields.args, result_summary: fields.result_summary, changed: false };
    const v = r.value as { args: unknown; result_summary: unknown };
    return { args: v.args, result_summary: v.result_summary, changed: true };
  }

  /** A JSON value (an output's content) with its secrets replaced; `changed` false when none. */
  json(value: unknown): { value: unknown; changed: boolean } {
    const r = redactJson(value, this.mark, this.detect);
    return r.redactions.length === 0 ? { value, changed: false } : { value: r.value, changed: true };
  }

  /**
   * JSON text (an output's content) with its secrets out, written by JSON.stringify when one was;
   * the text itself, not parsed, when it can hold none. `value`: the text parsed, when the caller
   * has it (it is not parsed again). The value walked comes back too (none when it was not).
   */
  jsonText(text: string, value?: unknown): { text: string; value?: unknown } {
    if (this.holdsNone(text)) return { text };
    const r = this.json(value === undefined ? (JSON.parse(text) as unknown) : value);
    return { text: r.changed ? JSON.stringify(r.value) : text, value: r.value };
  }

  /**
   * A quarantined packet's text with its secrets out, the text as sent when it holds none. A JSON
   * packet is redacted as a value, and where its args_hash (or an output's content_hash, size and
   * sample) matched what it carried, they are made to match what is left: replaying the stored
   * bytes as they are then judges the packet as its emitter would have sent it redacted. Text that
   * is not JSON is redacted as text.
   */
  packet(text: string): string {
    // A rejected packet is usually wrong, not secret: a flood of them skips the parse and walk.
    if (Object.keys(this.policy.paths ?? {}).length === 0 && this.holdsNone(text)) return text;
    let packet: unknown;
    try {
      packet = JSON.parse(text);
    } catch {
      return this.text(text);
    }
    if (!isObject(packet)) return this.text(text);
    let changed = this.quarantinedCall(packet.invocation);
    changed = this.quarantinedContent(packet) || changed;
    const rest = this.json(packet);
    return changed || rest.changed ? JSON.stringify(rest.value) : text;
  }

  private quarantinedCall(inv: unknown): boolean {
    if (!isObject(inv)) return false;
    const hashOf = (args: unknown) => {
      try {
        return argsHash(args as JsonValue);
      } catch {
        return undefined;
      }
    };
    const r = this.call(typeof inv.tool_id === 'string' ? inv.tool_id : '', { args: inv.args, result_summary: inv.result_summary });
    if (!r.changed) return false;
    // Whether the args_hash the packet carried matched its args as sent (inv.args is still those).
    const held = typeof inv.args_hash === 'string' && hashOf(inv.args) === inv.args_hash;
    inv.args = r.args;
    inv.result_summary = r.result_summary;
    if (held) inv.args_hash = hashOf(r.args);
    return true;
  }

  private quarantinedContent(packet: Record<string, unknown>): boolean {
    const out = packet.output;
    if (!isObject(out) || packet.content === undefined) return false;
    const textOf = (c: unknown) => (typeof c === 'string' ? c : JSON.stringify(c));
    const before = textOf(packet.content);
    const red = typeof packet.content === 'string' ? this.text(packet.content) : this.json(packet.content).value;
    const after = textOf(red);
    if (after === before) return false;
    if (out.content_hash === sha256Hex(before)) {
      out.content_hash = sha256Hex(after);
      out.size_bytes = utf8ByteLength(after);
      if (typeof out.sample === 'string') out.sample = contentSample(after);
    }
    packet.content = red;
    return true;
  }
}

const NO_PATHS: readonly string[] = [];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
