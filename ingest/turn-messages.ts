/**
 * A model turn's messages with their secrets out. The text is a JSON object of a span's message
 * attributes, and their values are most often JSON text themselves (GenAI's message arrays, the
 * AI SDK's prompt): the redactor reads each JSON text inside a string as the JSON it holds (a
 * secret there is escaped twice, `password=\"…\"`, and a value under a secret's name is found only
 * by its key), as it does in a call's args and outputs. Messages without a secret are stored as
 * sent. Pure.
 */
import type { Redactor } from '../schemas/redaction-policy.ts';

/** `text` (a turn's messages) redacted, each JSON text inside judged as the JSON it holds. */
export function redactMessages(redactor: Redactor, text: string): string {
  let outer: unknown;
  try {
    outer = JSON.parse(text) as unknown;
  } catch {
    return redactor.text(text);
  }
  const r = redactor.json(outer);
  return r.changed ? JSON.stringify(r.value) : text;
}
