/**
 * The tool manifest of the benchmarks: the bench data's tools (bench/reads/queries-data.ts), reads
 * idempotent with cache TTLs, writes not, rate limits, an input schema, billable tools.
 */
import { parseManifest, type Manifest } from '../../schemas/tool-manifest.ts';

const QUERY_INPUT = { type: 'object', properties: { q: { type: 'string' }, page: { type: 'integer' } }, required: ['q'] };

/** The manifest document. */
export const BENCH_MANIFEST_DOC: Record<string, Record<string, unknown>> = {
  search_web: { tool_id: 'search_web', idempotent: true, cache_ttl_ms: 900_000, rate_limit_rpm: 600, timeout_ms: 15_000, receives_untrusted_input: true, billable: true },
  fetch_url: { tool_id: 'fetch_url', idempotent: true, cache_ttl_ms: 300_000, timeout_ms: 30_000, receives_untrusted_input: true, max_retries: 2 },
  python_execute: { tool_id: 'python_execute', timeout_ms: 60_000, max_retries: 0 },
  create_chart: { tool_id: 'create_chart', idempotent: true, cache_ttl_ms: 0 },
  read_file: { tool_id: 'read_file', idempotent: true, cache_ttl_ms: 60_000, accesses_private_data: true },
  write_file: { tool_id: 'write_file' },
  sql_query: { tool_id: 'sql_query', idempotent: true, cache_ttl_ms: 300_000, accesses_private_data: true, input_schema: QUERY_INPUT },
  llm_summarize: { tool_id: 'llm_summarize', billable: true, timeout_ms: 120_000 },
  image_generate: { tool_id: 'image_generate', billable: true },
  send_email: { tool_id: 'send_email', communicates_externally: true, requires_approval: true, rate_limit_rpm: 120 },
  vector_search: { tool_id: 'vector_search', idempotent: true, cache_ttl_ms: 3_600_000, billable: true },
  translate_text: { tool_id: 'translate_text', idempotent: true, cache_ttl_ms: 86_400_000, billable: true },
  finance_quote: { tool_id: 'finance_quote', idempotent: true, cache_ttl_ms: 60_000, rate_limit_rpm: 1200 },
};

/** The parsed manifest. */
export function benchManifest(): Manifest {
  const r = parseManifest(BENCH_MANIFEST_DOC);
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.manifest;
}
