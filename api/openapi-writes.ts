/**
 * The routes outside the read route table, as parts of the OpenAPI document: the ingest writes
 * (packets, quarantine replays, traces, MCP tools reports, budget checks), the admin writes
 * (manifests, budgets), the export and the operations routes.
 */
import { EXPORT_CONTENT_TYPES } from '../queries/export.ts';
import { budgetCheckAnswerSchema, budgetCheckRequestSchema, budgetSetSchema } from '../queries/budgets/schemas.ts';
import { replayAnswerSchema } from '../queries/quarantine-schemas.ts';
import { mcpToolsAnswerSchema, mcpToolsBodySchema } from '../schemas/mcp-tools.ts';
import { errors, HEADERS_TOO_LARGE, jsonSchema, READ_ERRORS, SECURITY } from './openapi-parts.ts';
import { replayRequestSchema } from './quarantine-replay.ts';
import { exportQuerySchema } from './routes/export.ts';

/** POST /v1/packets and POST /v1/quarantine/replay: packets in, and quarantined packets again. */
export function addIngestWrites(paths: Record<string, unknown>, schemas: Record<string, unknown>): void {
  paths['/v1/packets'] = {
    post: {
      operationId: 'postPackets',
      summary: 'Ingest packets (SPEC §6): a JSON array or NDJSON; a verdict per packet.',
      tags: ['ingest'],
      security: SECURITY,
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Packet' } } },
          'application/x-ndjson': { schema: { type: 'string', description: 'one Packet object per line' } },
        },
      },
      responses: {
        '200': {
          description: 'a verdict per packet: valid ones are durable, invalid ones quarantined',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/PacketsAnswer' } } },
        },
        ...errors({
          '400': 'the body is neither a JSON array of packets nor NDJSON',
          '401': 'missing or unknown API key',
          '403': 'the key lacks the ingest scope',
          '413': 'body too large (MAX_BODY_BYTES)',
          '415': 'unsupported media type',
          '503': 'Kafka or ClickHouse unavailable (see Retry-After); nothing of the body is acknowledged',
        }),
        ...HEADERS_TOO_LARGE,
      },
    },
  };
  schemas.QuarantineReplay = jsonSchema(replayAnswerSchema, 'output');
  paths['/v1/quarantine/replay'] = {
    post: {
      operationId: 'replayQuarantine',
      summary:
        "Replay quarantined packets through the ingest pipeline: {ids[], packets?[]} (packets[i] = the producer's corrected packet for ids[i]) or {filter}. What passes lands once; what still fails is answered and not quarantined again; each replay is recorded in the packet's replays[].",
      tags: ['ingest'],
      security: SECURITY,
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(replayRequestSchema, 'input') } } },
      responses: {
        '200': { description: 'a verdict per replayed packet', content: { 'application/json': { schema: { $ref: '#/components/schemas/QuarantineReplay' } } } },
        ...errors({ '403': 'the key lacks the ingest scope', '404': 'an id names no quarantined packet (nothing replayed)' }),
      },
    },
  };
}

/** PUT /v1/manifests, beside the read route's GET. */
export function addManifestWrite(paths: Record<string, unknown>): void {
  paths['/v1/manifests'] = {
    ...(paths['/v1/manifests'] as object),
    put: {
      operationId: 'putManifest',
      summary: 'Apply a tool manifest (tool-smith format, JSON or YAML) as the next version, whole, or refuse it with every error named (docs/manifests-budgets-hints.md: Tool manifests).',
      tags: ['admin'],
      security: SECURITY,
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', additionalProperties: { type: 'object' } } }, 'application/yaml': { schema: { type: 'string' } } } },
      responses: {
        '200': { description: 'applied: {version, effective_at, tools, warnings}' },
        ...errors({ '400': 'invalid manifest: {error, message, errors[]} naming every error; nothing applied', '403': 'the key lacks the admin scope', '415': 'unsupported media type' }),
      },
    },
  };
}

/** GET /healthz, /readyz and /metrics. */
export function addOperations(paths: Record<string, unknown>): void {
  for (const [url, summary] of [
    ['/healthz', 'liveness'],
    ['/readyz', 'readiness: ClickHouse (and Kafka when used) reachable'],
    ['/metrics', 'Prometheus metrics (text exposition format)'],
  ] as const) {
    paths[url] = { get: { operationId: url.slice(1), summary, tags: ['operations'], security: [], responses: { '200': { description: 'OK' } } } };
  }
}

/** PUT /v1/budgets and POST /v1/budget/check (api/routes/budgets.ts): the budget writes beside the read routes' GETs. */
export function addBudgetWrites(paths: Record<string, unknown>, schemas: Record<string, unknown>): void {
  schemas.BudgetCheckAnswer = jsonSchema(budgetCheckAnswerSchema, 'output');
  paths['/v1/budgets'] = {
    ...(paths['/v1/budgets'] as object),
    put: {
      operationId: 'putBudgets',
      summary: 'Replace the budget set, whole, as a new version (docs/manifests-budgets-hints.md: Budgets); refused whole with every error named.',
      tags: ['admin'],
      security: SECURITY,
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(budgetSetSchema, 'input') } } },
      responses: {
        '200': { description: 'applied', content: { 'application/json': { schema: { type: 'object', properties: { version: { type: 'integer' }, budgets: { type: 'integer' } }, required: ['version', 'budgets'] } } } },
        ...errors({ '400': 'invalid JSON or budget set: nothing applied', '403': 'the key lacks the admin scope', '415': 'unsupported media type' }),
      },
    },
  };
  paths['/v1/budget/check'] = {
    post: {
      operationId: 'checkBudget',
      summary: 'Before a call: allow, warn or deny against every matching budget; an allowed check with a call_id reserves its projected cost until the call is stored. Each answer is recorded (GET /v1/budget/decisions).',
      tags: ['ingest'],
      security: SECURITY,
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(budgetCheckRequestSchema, 'input') } } },
      responses: {
        '200': { description: 'the decision', content: { 'application/json': { schema: { $ref: '#/components/schemas/BudgetCheckAnswer' } } } },
        ...errors({ '400': 'invalid JSON or request', '403': 'the key lacks the ingest scope', '415': 'unsupported media type' }),
      },
    },
  };
}

/** POST /v1/mcp/tools (api/routes/mcp-tools.ts): the MCP gateway's tools/list reports. */
export function addMcpToolsReport(paths: Record<string, unknown>, schemas: Record<string, unknown>): void {
  schemas.McpToolsReport = jsonSchema(mcpToolsBodySchema, 'input');
  schemas.McpToolsAnswer = jsonSchema(mcpToolsAnswerSchema, 'output');
  paths['/v1/mcp/tools'] = {
    post: {
      operationId: 'postMcpTools',
      summary:
        "An MCP server's tools/list as the `tool-audit mcp` gateway saw it: its tools (tool_id = server/name) replace the server's part of the tool manifest as the next version when it changed (version null when nothing did); a definition change is a tool_definition_changed finding (docs/manifests-budgets-hints.md: MCP servers).",
      tags: ['ingest'],
      security: SECURITY,
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/McpToolsReport' } } } },
      responses: {
        '200': { description: 'applied, or nothing to apply', content: { 'application/json': { schema: { $ref: '#/components/schemas/McpToolsAnswer' } } } },
        ...errors({
          '400': 'malformed JSON or report (the message names every problem); nothing applied',
          '401': 'missing or unknown API key',
          '403': 'the key lacks the ingest scope',
          '413': 'body too large (MAX_BODY_BYTES)',
          '415': 'unsupported media type',
          '503': 'ClickHouse unavailable (see Retry-After)',
        }),
      },
    },
  };
}

/** POST /v1/traces (api/routes/traces.ts): OTLP/HTTP trace export, answered as the OTLP specification says. */
export function addTraces(paths: Record<string, unknown>): void {
  const body = (description: string) => ({
    description,
    content: {
      'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
      'application/json': { schema: { type: 'object', description: 'OTLP/JSON (protobuf JSON mapping)' } },
    },
  });
  paths['/v1/traces'] = {
    post: {
      operationId: 'postTraces',
      summary:
        'OTLP/HTTP trace export (ExportTraceServiceRequest, protobuf or JSON, gzip or not): tool spans become tool_call and tool_output packets through the same checks as POST /v1/packets; other spans are ignored (docs/emitters.md: OpenTelemetry tool spans).',
      tags: ['ingest'],
      security: SECURITY,
      requestBody: {
        required: true,
        content: {
          'application/x-protobuf': { schema: { type: 'string', format: 'binary', description: 'ExportTraceServiceRequest' } },
          'application/json': { schema: { type: 'object', description: 'ExportTraceServiceRequest in the OTLP/JSON encoding' } },
        },
      },
      responses: {
        '200': body('ExportTraceServiceResponse in the request\'s encoding; partial_success counts the spans rejected (quarantined)'),
        '400': body('google.rpc.Status: the body is not an ExportTraceServiceRequest, or gzip is broken'),
        ...errors({ '401': 'missing or unknown API key', '403': 'the key lacks the ingest scope' }),
        '413': body('google.rpc.Status: body too large (MAX_BODY_BYTES), compressed or inflated'),
        '415': body('google.rpc.Status: send application/x-protobuf or application/json'),
        '503': body('google.rpc.Status: Kafka or ClickHouse unavailable (see Retry-After); nothing of the body is acknowledged'),
      },
    },
  };
}

/** GET /v1/export (api/routes/export.ts): rows streamed as NDJSON, CSV or Parquet. */
export function addExport(paths: Record<string, unknown>): void {
  const doc = jsonSchema(exportQuerySchema, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  const parameters = Object.entries(doc.properties ?? {}).map(([name, prop]) => {
    const { description, ...schema } = prop;
    return { name, in: 'query', required: (doc.required ?? []).includes(name), description, schema };
  });
  paths['/v1/export'] = {
    get: {
      operationId: 'export',
      summary:
        'Every stored call, output, dependency or violation of a range (and of one task), in its table order (calls by task then time), as NDJSON, CSV or Parquet written by ClickHouse, streamed with bounded memory. An export that fails once begun ends without its closing chunk (a broken transfer, never a short file). Bounded: from to min(to, now) covers at most EXPORT_MAX_DAYS (93) days (400 otherwise: export a longer range in parts), and at most EXPORT_CONCURRENCY_PER_CLIENT (2) exports run at once per key (429 with Retry-After).',
      tags: ['read'],
      security: SECURITY,
      parameters,
      responses: {
        '200': { description: 'the rows, streamed', content: Object.fromEntries(Object.values(EXPORT_CONTENT_TYPES).map((t) => [t.split(';')[0], { schema: { type: 'string', format: 'binary' } }])) },
        ...errors(READ_ERRORS),
        ...HEADERS_TOO_LARGE,
      },
    },
  };
}
