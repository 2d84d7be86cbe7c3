/**
 * Manifest files as `tool-audit manifests apply` reads them: one file, or every top-level
 * `*.yaml` / `*.yml` / `*.json` file of a directory (merged; a tool in two files is an error;
 * sub-directories such as `schemas/` are not read as manifests). `input_schema` / `output_schema`
 * given as paths are read relative to the manifest file. Every error is collected: the caller
 * refuses the whole manifest when there is any.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { decodeManifestText } from '../schemas/manifest-text.ts';
import { parseManifest, type ManifestParse } from '../schemas/tool-manifest.ts';

/** The manifest document of FILE or DIR, schema paths resolved and parsed, or every error. */
export function loadManifestFiles(target: string): ManifestParse & { document?: Record<string, unknown> } {
  let files: string[];
  try {
    files = statSync(target).isDirectory()
      ? readdirSync(target)
          .filter((f) => /\.(ya?ml|json)$/i.test(f))
          .sort()
          .map((f) => join(target, f))
      : [target];
  } catch (err) {
    return { ok: false, errors: [`${target}: ${(err as Error).message}`] };
  }
  if (files.length === 0) return { ok: false, errors: [`${target}: no *.yaml, *.yml or *.json file`] };
  const errors: string[] = [];
  const document: Record<string, unknown> = {};
  const from = new Map<string, string>();
  for (const file of files) {
    const decoded = decodeManifestText(readText(file, errors) ?? '');
    if (!decoded.ok) {
      errors.push(`${file}: ${decoded.error}`);
      continue;
    }
    if (typeof decoded.doc !== 'object' || decoded.doc === null || Array.isArray(decoded.doc)) {
      errors.push(`${file}: must be a map of tool_id → entry`);
      continue;
    }
    for (const [toolId, entry] of Object.entries(decoded.doc)) {
      const earlier = from.get(toolId);
      if (earlier) errors.push(`${file}: ${toolId} is also declared in ${earlier}`);
      from.set(toolId, file);
      document[toolId] = resolveSchemas(entry, dirname(file), `${file}: ${toolId}`, errors);
    }
  }
  const parsed = parseManifest(document);
  if (!parsed.ok) return { ok: false, errors: [...errors, ...parsed.errors] };
  return errors.length > 0 ? { ok: false, errors } : { ...parsed, document };
}

function readText(file: string, errors: string[]): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    errors.push(`${file}: ${(err as Error).message}`);
    return undefined;
  }
}

/** The entry with its schema paths replaced by the schemas they name. */
function resolveSchemas(entry: unknown, dir: string, where: string, errors: string[]): unknown {
  if (typeof entry !== 'object' || entry === null) return entry;
  const out: Record<string, unknown> = { ...(entry as Record<string, unknown>) };
  for (const field of ['input_schema', 'output_schema']) {
    const path = out[field];
    if (typeof path !== 'string') continue;
    const file = resolve(dir, path);
    const text = readText(file, errors);
    if (text === undefined) {
      out[field] = null;
      continue;
    }
    const decoded = decodeManifestText(text);
    if (decoded.ok) out[field] = decoded.doc;
    else {
      errors.push(`${where}.${field}: ${file}: ${decoded.error.replace(/^manifest: /, '')}`);
      out[field] = null;
    }
  }
  return out;
}
