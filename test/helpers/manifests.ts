/**
 * Manifests for tests: entries keyed by tool without repeating tool_id, parsed (defaults applied)
 * as PUT /v1/manifests parses them; a document the parser refuses is a bug in the test.
 */
import { parseManifest, type Manifest } from '../../schemas/tool-manifest.ts';

/** The parsed manifest of `{tool: entry fields}`. */
export function manifestOf(doc: Record<string, object>): Manifest {
  const r = parseManifest(Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, { tool_id: k, ...v }])));
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.manifest;
}
