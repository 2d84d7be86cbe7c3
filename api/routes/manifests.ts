/**
 * PUT /v1/manifests (`admin` scope): a tool manifest (tool-smith format) as JSON or YAML becomes
 * the next version, whole, or is refused whole with every error named (400, nothing stored).
 * Reading it back is the read API's (GET /v1/manifests, /v1/manifests/{tool_id}/history).
 */
import type { FastifyInstance } from 'fastify';
import { applyManifest } from '../../analyzers/manifest-store.ts';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import type { ApiKey } from '../../platform/config.ts';
import { decodeManifestText } from '../../schemas/manifest-text.ts';
import { parseManifest } from '../../schemas/tool-manifest.ts';
import { keyIdOf, requireScope } from '../auth.ts';

/** Media types a manifest may be sent as (all parsed the same way: JSON is YAML). */
export const MANIFEST_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml', 'text/plain'];

/** Dependencies of {@link registerManifestRoutes}. */
export interface ManifestRouteDeps {
  clickhouse: ClickHouseDoor;
  apiKeys: ApiKey[];
  /** Clock of the version's effective_at, for tests. */
  now?: () => number;
}

/** Registers PUT /v1/manifests in a scope of its own (its body parsers touch no other route). */
export function registerManifestRoutes(app: FastifyInstance, deps: ManifestRouteDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(MANIFEST_MEDIA_TYPES, { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.put('/v1/manifests', { preHandler: requireScope(deps.apiKeys, 'admin') }, async (req, reply) => {
      if (typeof req.body !== 'string') {
        return reply.code(415).send({ error: 'unsupported_media_type', message: `send the manifest as one of ${MANIFEST_MEDIA_TYPES.join(', ')}`, request_id: req.id });
      }
      const decoded = decodeManifestText(req.body);
      const parsed = decoded.ok ? parseManifest(decoded.doc) : { ok: false as const, errors: [decoded.error] };
      if (!parsed.ok) {
        return reply.code(400).send({ error: 'invalid_manifest', message: `manifest refused, nothing applied: ${parsed.errors.length} error(s)`, errors: parsed.errors, request_id: req.id });
      }
      const applied = await applyManifest(deps.clickhouse, parsed.manifest, (deps.now ?? Date.now)(), keyIdOf(req, deps.apiKeys));
      req.log.info({ version: applied.version, tools: applied.tools, warnings: applied.warnings.length }, 'manifest applied');
      return reply.code(200).send(applied);
    });
  });
}
