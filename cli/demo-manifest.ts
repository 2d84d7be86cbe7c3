/**
 * The tool manifest `tool-audit demo` applies (PUT /v1/manifests) before its packets, in
 * tool-smith's format: the demo's tools with timeouts, retry caps, rate limits, cache TTLs and
 * capability tags, so the manifest views, the cache simulation and the M rules have something
 * to show. Its deliberate offences are in demo.ts (`manifestOffences`).
 */
const SEARCH_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { query: { type: 'string', description: 'what to search for' }, top_k: { type: 'integer', minimum: 1, description: 'results to return' } },
  required: ['query'],
  additionalProperties: false,
};

/** The demo manifest document (tool_id → entry). */
export const DEMO_MANIFEST: Record<string, Record<string, unknown>> = {
  search_web: { tool_id: 'search_web', name: 'Search the web', input_schema: SEARCH_INPUT, idempotent: true, timeout_ms: 15_000, receives_untrusted_input: true, max_retries: 2, rate_limit_rpm: 60, cache_ttl_ms: 3_600_000, billable: true, cost_usd_per_call: 0.005 },
  fetch_url: { tool_id: 'fetch_url', name: 'Fetch a page', idempotent: true, timeout_ms: 30_000, receives_untrusted_input: true, max_retries: 1, cache_ttl_ms: 900_000 },
  python_execute: { tool_id: 'python_execute', name: 'Run Python', idempotent: false, timeout_ms: 60_000, max_retries: 0 },
  create_chart: { tool_id: 'create_chart', idempotent: true, timeout_ms: 15_000, cache_ttl_ms: 0 },
  llm_summarize: { tool_id: 'llm_summarize', idempotent: false, timeout_ms: 120_000, billable: true },
  image_generate: { tool_id: 'image_generate', idempotent: false, timeout_ms: 60_000, billable: true, cost_usd_per_call: 0.04 },
  mail_read: { tool_id: 'mail_read', description: 'Read the support inbox', idempotent: true, receives_untrusted_input: true, accesses_private_data: true },
  webhook_post: { tool_id: 'webhook_post', description: 'Post to a partner webhook', idempotent: false, communicates_externally: true, requires_approval: true },
};
