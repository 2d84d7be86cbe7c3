/**
 * POST /v1/mcp/tools (`ingest` scope: the `tool-audit mcp` gateway holds an ingest key, as an
 * emitter does): what an upstream MCP server answered to tools/list, all pages gathered. The
 * server's tools become its part of the tool manifest, applied as the next version only when it
 * changed (analyzers/mcp-store.ts); a bad body is refused (400) with every problem named.
 * Reading back is the read API's (GET /v1/mcp/servers, GET /v1/manifests).
 */
import type { FastifyInstance } from 'fastify';
import { applyMcpTools } from '../../analyzers/mcp-store.ts';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import type { ApiKey } from '../../platform/config.ts';
import { mcpToolsBodySchema } from '../../schemas/mcp-tools.ts';
import { keyIdOf, requireScope } from '../auth.ts';
import { jsonBody } from '../budgets/check-listener.ts';
import { issuesText } from '../read-params.ts';

/** Dependencies of {@link registerMcpToolRoutes}: where manifests are applied. */
export interface McpToolRouteDeps {
  clickhouse: ClickHouseDoor;
  apiKeys: ApiKey[];
  /** Clock of the version's effective_at, for tests. */
  now?: () => number;
}

/** Registers POST /v1/mcp/tools in a scope of its own (its JSON parser touches no other route). */
export function registerMcpToolRoutes(app: FastifyInstance, deps: McpToolRouteDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The body as text, parsed below: a parse error is then answered in the project's shape.
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.post('/v1/mcp/tools', { preHandler: requireScope(deps.apiKeys, 'ingest') }, async (req, reply) => {
      if (typeof req.body !== 'string') return reply.code(415).send({ error: 'unsupported_media_type', message: 'send the tools/list report as application/json', request_id: req.id });
      const json = jsonBody(req.body);
      if (!json.ok) return reply.code(400).send({ error: 'bad_request', message: json.message, request_id: req.id });
      const parsed = mcpToolsBodySchema.safeParse(json.value);
      if (!parsed.success) return reply.code(400).send({ error: 'bad_request', message: issuesText(parsed.error), request_id: req.id });
      const { answer, recorded } = await applyMcpTools(deps.clickhouse, parsed.data, (deps.now ?? Date.now)(), keyIdOf(req, deps.apiKeys));
      const changes = { version: answer.version, added: answer.added.length, removed: answer.removed.length, changed: answer.changed.length, findings: recorded };
      req.log.info({ server: answer.server, ...changes, warnings: answer.warnings.length }, 'mcp tools reported');
      return reply.code(200).send(answer);
    });
  });
}
