/**
 * The packet an edge (POST /v1/packets, /v1/traces) produces to Kafka, its secrets out: a topic
 * keeps what it is given for its whole retention, so what the edge forwards holds no more than
 * the rows the worker will store. Pure.
 *
 * An accepted packet is rewritten from its decoded row — the args, args_hash, summary and error,
 * the content with its hash, size and sample, a dependency's data_flow, a hint's evidence, all as they will be
 * stored — into the packet as sent, numbers kept as written. The worker decodes it into the same
 * row: the invariants hold for the redacted values (the hashes are theirs), and redacting them
 * again changes nothing (a placeholder is never redacted twice). A rejected packet is redacted
 * as the quarantine stores it. A packet with nothing to take out goes as it came, byte for byte.
 */
import { parseLossless } from '../schemas/lossless-json.ts';
import { stringifyLossless } from '../schemas/raw-json.ts';
import type { JsonValue } from '../schemas/canonical-json.ts';
import type { Redactor } from '../schemas/redaction-policy.ts';
import type { Accepted, DecodeResult } from './rows.ts';

type Obj = Record<string, JsonValue>;
const isObj = (v: JsonValue | undefined): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const marked = (...texts: Array<string | null | undefined>): boolean => texts.some((t) => typeof t === 'string' && t.includes('[redacted:'));

/** Whether the decoder took a secret out of the packet's row (calls and outputs record where; the other kinds' texts carry the mark). */
function redactedIn(a: Accepted): boolean {
  switch (a.kind) {
    case 'dependency':
      return marked(a.row.data_flow);
    case 'hint':
      return marked(a.row.evidence);
    case 'turn':
      return marked(a.row.error, a.row.messages);
    case 'run':
      return marked(a.row.name, a.row.error);
    default:
      return a.row.redactions !== '';
  }
}

/** The text to produce for a packet judged `d` (decoded with `redactor`): `raw` itself when nothing in it is secret. */
export function topicText(raw: string, d: DecodeResult, redactor: Redactor): string {
  if (!d.ok) return redactor.packet(raw);
  const a = d.value;
  if (!redactedIn(a)) return raw;
  const packet = parseLossless(raw);
  if (!isObj(packet)) return redactor.packet(raw);
  if (a.kind === 'invocation' && isObj(packet.invocation)) {
    const inv = packet.invocation;
    inv.args = parseLossless(a.row.args) as JsonValue;
    inv.args_hash = a.row.args_hash;
    inv.result_summary = parseLossless(a.row.result_summary) as JsonValue;
    if (a.row.error !== null) inv.error = a.row.error;
  } else if (a.kind === 'output' && isObj(packet.output)) {
    // As text: a JSON value sent as a value goes as its serialized text, whose hash it carries.
    packet.content = a.content.content;
    packet.output.content_hash = a.row.content_hash;
    packet.output.size_bytes = a.row.size_bytes;
    if (packet.output.sample != null) packet.output.sample = a.row.sample;
  } else if (a.kind === 'dependency' && isObj(packet.dependency)) {
    packet.dependency.data_flow = a.row.data_flow;
  } else if (a.kind === 'hint' && isObj(packet.hint)) {
    packet.hint.evidence = parseLossless(a.row.evidence) as JsonValue;
  } else if (a.kind === 'turn' && isObj(packet.turn)) {
    packet.turn.error = a.row.error;
    if (a.row.messages !== undefined) packet.turn.messages = a.row.messages;
  } else if (a.kind === 'run' && isObj(packet.run)) {
    packet.run.name = a.row.name;
    packet.run.error = a.row.error;
  } else {
    return redactor.packet(raw);
  }
  return stringifyLossless(packet);
}
