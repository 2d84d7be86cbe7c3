/**
 * Dedup & cache: which calls were wasted? Calls repeated with identical arguments and what the
 * repeats cost (what a cache would save), repeats over time, and outputs with identical content.
 */
import { IDENTICAL_OUTPUT_CONTENTS, REPEATS_OVER_TIME } from '../queries/dashboard-dedup.ts';
import { DEDUP_CANDIDATES_INDEXED, DEDUP_CANDIDATES_INDEXED_NAMED } from '../queries/dedup-candidates.ts';
import { IDENTICAL_OUTPUT_GROUPS } from '../queries/identical-outputs.ts';
import { CACHE_SIMULATION, CACHE_TTL_CURVE } from '../queries/cache-simulation.ts';
import { baseDashboard, finish, type BuiltDashboard, type DashboardOptions } from './base.ts';
import { barPanel, seriesPanel, statPanel, tablePanel } from './panels.ts';
import { numberVariable } from './variables.ts';

export const DEDUP_UID = 'tool-audit-dedup';

/** Builds the Dedup & cache dashboard. */
export function buildDedup(opts: DashboardOptions): BuiltDashboard {
  const { builder, layout } = baseDashboard(opts, DEDUP_UID, 'tool-audit · Dedup & cache', 'Duplicate calls with their potential savings, and identical outputs.');
  builder.withVariable(numberVariable('min_count', 'Min repeats', [2, 3, 5, 10], 2, 'Show groups with at least this many identical calls or outputs.'));
  builder.withPanel(
    statPanel(layout, {
      title: 'Potential savings',
      description: "Over the time range: groups of calls with identical (tool_id, args_hash), calls beyond the first of each group, and the time and money those repeats cost (the API's dedup totals).",
      // Totals only: the indexed statement leaves each group's names empty, which this panel never shows.
      targets: [{ spec: DEDUP_CANDIDATES_INDEXED, limit: 1 }],
      w: 24,
      h: 4,
      fields: [
        { field: 'total_groups', name: 'Duplicate groups', unit: 'short' },
        { field: 'total_duplicate_calls', name: 'Repeated calls', unit: 'short' },
        { field: 'total_savings_ms', name: 'Time saved', unit: 'ms' },
        { field: 'total_savings_usd', name: 'Cost saved', unit: 'currencyUSD' },
      ],
    }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Repeated calls over time', description: 'Calls per interval that repeated an earlier call of the range with the same tool and arguments (cache hits).', targets: [{ spec: REPEATS_OVER_TIME }], w: 24, h: 7, unit: 'short', bars: true }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Dedup candidates',
      description: "Groups of calls with identical tool and arguments, most repeated first, with what the repeats beyond the first cost (the API's GET /v1/dedup/candidates).",
      targets: [{ spec: DEDUP_CANDIDATES_INDEXED_NAMED, limit: 100 }],
      w: 24,
      h: 10,
      units: { potential_savings_ms: 'ms', potential_savings_usd: 'currencyUSD', first_ms: 'dateTimeAsIso', last_ms: 'dateTimeAsIso' },
      hide: ['total_groups', 'total_duplicate_calls', 'total_savings_ms', 'total_savings_usd'],
      rename: { first_ms: 'first_seen', last_ms: 'last_seen' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Identical outputs',
      description: "Outputs of one tool with the same content hash, most repeated first (the API's GET /v1/outputs/identical).",
      targets: [{ spec: IDENTICAL_OUTPUT_GROUPS, limit: 100, overrides: { tool_id: "''" } }],
      w: 10,
      h: 10,
      rename: { n: 'outputs' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Identical output contents',
      description: 'The same groups with their size, the bytes stored more than once, content type, a sample and the first calls that produced them.',
      targets: [{ spec: IDENTICAL_OUTPUT_CONTENTS, limit: 100 }],
      w: 14,
      h: 10,
      units: { bytes: 'bytes', repeated_bytes: 'bytes' },
      rename: { n: 'outputs' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Cache simulation per tool',
      description:
        "A TTL cache keyed by (tool_id, args_hash) replayed over the range at each tool's manifest cache_ttl_ms: calls, hits and the time and money the hits would have saved; only tools the current manifest declares idempotent are cacheable (the API's GET /v1/cache/simulation).",
      targets: [{ spec: CACHE_SIMULATION, overrides: { tool_id: "''", ttl_ms: '-1' } }],
      w: 14,
      h: 9,
      units: { ttl_ms: 'ms', saved_ms: 'ms', saved_usd: 'currencyUSD' },
    }),
  );
  builder.withPanel(
    barPanel(layout, {
      title: 'Cache TTL curve (idempotent tools)',
      description: 'Time the hits would have saved at TTLs of 1 min, 5 min, 15 min, 1 h, 6 h, 24 h and 7 d, over every tool the current manifest declares idempotent (the API gives it per tool: GET /v1/cache/ttl-curve, with the suggested TTL).',
      targets: [{ spec: CACHE_TTL_CURVE, overrides: { tool_id: "''" } }],
      w: 10,
      h: 9,
      xField: 'ttl',
      unit: 'ms',
    }),
  );
  return finish(builder, layout);
}
