/**
 * A manifest document as text: JSON, or YAML (a superset of JSON, so JSON parses either way; JSON
 * is tried first for its exact error positions). Pure.
 */
import { parse as parseYaml } from 'yaml';

/** The decoded document, or why the text is neither JSON nor YAML. */
export type DecodedText = { ok: true; doc: unknown } | { ok: false; error: string };

/** Decodes a manifest document's text. */
export function decodeManifestText(text: string): DecodedText {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: 'manifest: the document is empty' };
  if (trimmed.startsWith('{')) {
    try {
      return { ok: true, doc: JSON.parse(trimmed) };
    } catch (err) {
      return { ok: false, error: `manifest: not valid JSON: ${(err as Error).message}` };
    }
  }
  try {
    // uniqueKeys: a tool declared twice is an error, not silently the last one.
    return { ok: true, doc: parseYaml(text, { uniqueKeys: true, prettyErrors: true }) };
  } catch (err) {
    return { ok: false, error: `manifest: not valid YAML: ${(err as Error).message.split('\n')[0]}` };
  }
}
