/**
 * GET /openapi.json: an OpenAPI 3.1 document generated from the same zod schemas that validate
 * the read API's inputs and type its answers (OpenAPI 3.1 uses JSON Schema 2020-12, which is what
 * zod emits), plus the routes outside the read table (openapi-writes.ts).
 */
import { packetComponentSchemas } from '../schemas/json-schema.ts';
import { packetAnswerSchema } from './packet-answer-schema.ts';
import { errors, errorSchema, HEADERS_TOO_LARGE, jsonSchema, READ_ERRORS, SECURITY } from './openapi-parts.ts';
import { addBudgetWrites, addExport, addIngestWrites, addManifestWrite, addMcpToolsReport, addOperations, addTraces } from './openapi-writes.ts';
import type { ReadRoute } from './read-route-table.ts';

function parameters(route: ReadRoute): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', route.params], ['query', route.query]] as const) {
    if (!schema) continue;
    const doc = jsonSchema(schema, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
    for (const [name, prop] of Object.entries(doc.properties ?? {})) {
      const { description, ...propSchema } = prop;
      out.push({ name, in: where, required: where === 'path' || (doc.required ?? []).includes(name), description, schema: propSchema });
    }
  }
  return out;
}

/** The read routes' GETs, each answer's schema a component named after its operation. */
function addReadRoutes(paths: Record<string, unknown>, schemas: Record<string, unknown>, routes: ReadRoute[]): void {
  for (const r of routes) {
    const name = r.operationId[0]?.toUpperCase() + r.operationId.slice(1);
    schemas[name] = jsonSchema(r.response, 'output');
    paths[r.url.replace(/:([a-z_]+)/g, '{$1}')] = {
      get: {
        operationId: r.operationId,
        summary: r.summary,
        tags: ['read'],
        security: SECURITY,
        parameters: parameters(r),
        responses: {
          '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } },
          ...errors({
            ...(r.params ? { ...READ_ERRORS, '414': 'a path id longer than the router takes (4096 bytes, percent-encoded)' } : READ_ERRORS),
            ...(r.notFound ? { '404': r.notFound } : {}),
            ...(r.conflict ? { '409': r.conflict } : {}),
          }),
          ...HEADERS_TOO_LARGE,
        },
      },
    };
  }
}

/** The OpenAPI document of the API. */
export function openApiDocument(routes: ReadRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = { Error: errorSchema, ...packetComponentSchemas(), PacketsAnswer: jsonSchema(packetAnswerSchema, 'output') };
  addReadRoutes(paths, schemas, routes);
  addIngestWrites(paths, schemas);
  addManifestWrite(paths);
  addBudgetWrites(paths, schemas);
  addMcpToolsReport(paths, schemas);
  addTraces(paths);
  addExport(paths);
  addOperations(paths);
  return {
    openapi: '3.1.0',
    info: { title: 'tool-audit', version, description: 'Audit and analytics of LLM agent tool calls (SPEC §5, §6). Timestamps are ISO-8601 UTC; lists are newest first unless stated and paginate with next_cursor.' },
    security: SECURITY,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas,
    },
    paths,
  };
}

