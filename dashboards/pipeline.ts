/**
 * Pipeline health: is ingest keeping up and is anything going wrong? Rows per minute into each
 * segment, ingest delay, analyzer lag and backlog, quarantined packets and recorded violations —
 * all read from ClickHouse.
 */
import {
  ANALYZER_BACKLOG,
  ANALYZER_LAG,
  INGEST_DELAY,
  INGEST_RATE,
  PIPELINE_TOTALS,
  QUARANTINE_BY_REASON,
  QUARANTINE_OVER_TIME,
  VIOLATIONS_BY_INVARIANT,
  VIOLATIONS_OVER_TIME,
} from '../queries/dashboard-pipeline.ts';
import { QUARANTINE_REPLAY_STATE } from '../queries/dashboard-quarantine.ts';
import { VIOLATIONS } from '../queries/violations.ts';
import { baseDashboard, finish, type BuiltDashboard, type DashboardOptions } from './base.ts';
import { seriesPanel, statPanel, tablePanel } from './panels.ts';

export const PIPELINE_UID = 'tool-audit-pipeline';

/** Builds the Pipeline health dashboard. */
export function buildPipeline(opts: DashboardOptions): BuiltDashboard {
  const { builder, layout } = baseDashboard(opts, PIPELINE_UID, 'tool-audit · Pipeline health', 'Ingest rate and lag, analyzer lag, quarantine and violations, from ClickHouse.');
  builder.withPanel(
    statPanel(layout, {
      title: 'Ingested in range',
      description: 'By arrival time: rows written per segment, packets quarantined, violations recorded, and the p95 delay from created_at to ingested_at.',
      targets: [{ spec: PIPELINE_TOTALS }],
      w: 24,
      h: 4,
      fields: [
        { field: 'invocations', name: 'Tool calls', unit: 'short' },
        { field: 'outputs', name: 'Outputs', unit: 'short' },
        { field: 'dependencies', name: 'Dependencies', unit: 'short' },
        { field: 'quarantined', name: 'Quarantined', unit: 'short' },
        { field: 'violations', name: 'Violations', unit: 'short' },
        { field: 'p95_ingest_delay_s', name: 'p95 ingest delay', unit: 's' },
      ],
    }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Ingest rate', description: 'Rows per minute written to each segment, by ingested_at (received_at for quarantine).', targets: [{ spec: INGEST_RATE }], w: 12, h: 8, unit: 'suffix: rows/min', label: 'segment', stacked: true }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Ingest delay', description: 'Seconds from created_at to ingested_at of tool calls: p50, p95 and max in each interval.', targets: [{ spec: INGEST_DELAY }], w: 12, h: 8, unit: 's' }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Analyzer lag', description: 'Per job: how far behind the wall clock its recorded watermark (newest ingested_at it had processed) was when recorded. The auditor trails by its grace period on purpose.', targets: [{ spec: ANALYZER_LAG }], w: 16, h: 8, unit: 's', label: 'job' }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Analyzer backlog',
      description: 'Per job, now: how far its watermark is behind the newest ingested row (0 = caught up) and when it last advanced.',
      targets: [{ spec: ANALYZER_BACKLOG }],
      w: 8,
      h: 8,
      units: { backlog_s: 's', processed_up_to: 'dateTimeAsIso', last_advanced: 'dateTimeAsIso' },
    }),
  );
  addProblemPanels(builder, layout);
  return finish(builder, layout);
}

/** What went wrong on the way in: quarantined packets and their replays, and the violations the auditor found. */
function addProblemPanels(builder: ReturnType<typeof baseDashboard>['builder'], layout: ReturnType<typeof baseDashboard>['layout']): void {
  builder.withPanel(
    seriesPanel(layout, { title: 'Quarantined packets', description: 'Packets that broke a MUST rule, per interval, by kind of reason: transport (oversized, malformed JSON, schema), key reuse (I1), other rules (I3, I5, I6, I7, envelope).', targets: [{ spec: QUARANTINE_OVER_TIME }], w: 12, h: 8, unit: 'short', stacked: true, bars: true }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Violations', description: 'Violations the auditor recorded per interval, by invariant (I4, I8, I9, I10, I11).', targets: [{ spec: VIOLATIONS_OVER_TIME }], w: 12, h: 8, unit: 'short', stacked: true, bars: true }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Quarantine by reason',
      description: 'Quarantined packets per reason code (every MUST rule listed, 0 when none), with packet types, the latest reason and where it came from (replay them once the producer is fixed).',
      targets: [{ spec: QUARANTINE_BY_REASON, limit: 100 }],
      w: 12,
      h: 9,
      units: { last_received: 'dateTimeAsIso' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Quarantined packets and their replays',
      description:
        "Each quarantined packet, newest first, and where its replays stand: waiting (never replayed), still failing, or landed. To fix a producer: `tool-audit quarantine show ID` (or GET /v1/quarantine/{id}) shows the exact bytes and reason; once the producer is fixed, `tool-audit quarantine replay ID [--packet corrected.json]` (POST /v1/quarantine/replay) re-submits it through the pipeline. docs/operations.md: Fixing a producer.",
      targets: [{ spec: QUARANTINE_REPLAY_STATE, limit: 200 }],
      w: 24,
      h: 9,
      units: { received_ms: 'dateTimeAsIso' },
      rename: { received_ms: 'received_at' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Violations by invariant',
      description: 'Violations recorded per audited invariant (0 when none) and the latest detail.',
      targets: [{ spec: VIOLATIONS_BY_INVARIANT }],
      w: 12,
      h: 9,
      units: { last_detected: 'dateTimeAsIso' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Recent violations',
      description: "What the auditor found, newest first, with the ids involved (the API's GET /v1/violations).",
      targets: [{ spec: VIOLATIONS, limit: 200, overrides: { invariant: "''", task_id: "''", call_id: "''", tool_id: "''" } }],
      w: 24,
      h: 9,
      units: { detected_ms: 'dateTimeAsIso' },
      rename: { detected_ms: 'detected_at' },
      hide: ['violation_key'],
    }),
  );
}
