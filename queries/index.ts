/**
 * The read patterns of SPEC §5 as one object of functions bound to a ClickHouse client and
 * database (built per process, never a singleton), and the catalogue of their statements for
 * Grafana panels and documentation.
 */
import { createPathCache } from '../analyzers/audit-log/path-cache.ts';
import type { StatementRunner } from './sql.ts';
import { AGENT_INVOCATIONS, AGENT_TOOL_FREQUENCY, byAgent, type ByAgentParams } from './by-agent.ts';
import { byTask, TASK_DEPENDENCIES, TASK_INVOCATIONS, TASK_DETAILS, TASK_OUTPUTS, type ByTaskParams } from './by-task.ts';
import { ORPHAN_CALL_IDS, OrphanCallIds, orphanLoader } from './orphan-call-ids.ts';
import { TASK_ROWS } from './task-rows.ts';
import { byToolInvocations, TOOL_INVOCATIONS, type ByToolInvocationsParams } from './by-tool-invocations.ts';
import { byToolStats, TOOL_STATS, type ByToolStatsParams } from './by-tool-stats.ts';
import { COMMON_SEQUENCES, commonSequences, type SequencesParams } from './common-sequences.ts';
import { DEDUP_CANDIDATES, DEDUP_CANDIDATES_EXACT, DEDUP_CANDIDATES_INDEXED, DEDUP_GROUP_NAMES, DEDUP_INDEX_STATE, dedupCandidates, type DedupParams } from './dedup-candidates.ts';
import { EXPENSIVE_CALLS, EXPENSIVE_TOTALS, expensiveCalls, type ExpensiveParams } from './expensive.ts';
import { FAILED_BY_CATEGORY, FAILED_BY_STATUS, FAILED_CALLS, failedCalls, FREQUENT_ERRORS, type FailedParams } from './failed.ts';
import { IDENTICAL_OUTPUT_CALLS, IDENTICAL_OUTPUT_GROUPS, identicalOutputs, type IdenticalOutputsParams } from './identical-outputs.ts';
import type { AgentTools, Dedup, Expensive, Failed, IdenticalOutputs, InvocationList, OutputContent, Sequences, Slow, TaskList, TaskView, ToolOutputs, ToolSeries, ToolStats, ToolsSummary, Violations, HintsList, ManifestAnswer, ManifestHistoryAnswer, McpServers, ModelCost, SearchAnswer } from '../schemas/answers.ts';
import { MODEL_COST, modelCost, type ModelCostParams } from './model-cost.ts';
import { TASK_TURNS } from './model-turns.ts';
import { TASK_NAMES, TASK_RUNS } from './agent-runs.ts';
import { SLOW_CALLS, SLOW_COUNT, slowCalls, type SlowParams } from './slow.ts';
import type { QueryContext, QuerySpec } from './sql.ts';
import { TOOL_OUTPUT_SAMPLES, TOOL_OUTPUTS, toolOutputs, type ToolOutputsParams } from './tool-outputs.ts';
import { TOOL_P95_DURATIONS, TOOL_SERVERS, TOOLS_SUMMARY, toolsSummary, type ToolsSummaryParams } from './tools-summary.ts';
import { TASK_LIST, TASK_LIST_TURNS, taskList, type TaskListParams } from './task-list.ts';
import { TOOL_SERIES, toolSeries, type ToolSeriesParams } from './tool-series.ts';
import { search, type SearchParams } from './search.ts';
import { VIOLATION_COUNTS, VIOLATION_TASKS, VIOLATIONS, violations, type ViolationsParams } from './violations.ts';
import { QUARANTINE_BY_ID, QUARANTINE_COUNTS, QUARANTINE_LIST, QUARANTINE_REPLAYS, quarantineList, quarantineShow, type QuarantineListParams, type QuarantineShowParams } from './quarantine.ts';
import type { QuarantineList, QuarantineShow } from './quarantine-schemas.ts';
import { BUDGET_DECISIONS, BUDGET_SET_LATEST, BUDGET_SPEND, budgetDecisions, budgetListFromStore, type BudgetDecisionsParams } from './budgets/sql.ts';
import type { BudgetDecisions, BudgetList } from './budgets/schemas.ts';
import { CACHE_SIMULATION, CACHE_SIMULATION_INDEXED, CACHE_TTL_CURVE, CACHE_TTL_CURVE_INDEXED, cacheSimulation, TOOL_IDEMPOTENT, ttlCurve, type CacheSimulationParams, type TtlCurveParams } from './cache-simulation.ts';
import type { CacheSimulation, TtlCurve } from '../schemas/cache-answers.ts';
import { CACHE_TTL_CURVE_PER_TOOL } from './cache-savings.ts';
import { HINTS_LIST, hintsList, type HintsParams } from './hints.ts';
import { HINT_BUNDLES, HINT_RETRIES } from './hint-candidates.ts';
import { currentManifest, MANIFEST_VERSIONS, manifestHistory } from './manifests.ts';
import { MCP_SERVER_TOOLS, mcpServers } from './mcp-servers.ts';
import { OUTPUT_BY_ID, OUTPUT_CONTENT, outputContent, type OutputContentParams } from './output-content.ts';
import { consistencyProof, inclusionProof, logHeads, type ConsistencyProof, type InclusionProof, type LogHeads, type LogHeadsParams, type NoProof } from './audit-log-proof.ts';

export type {
  ByAgentParams,
  ByTaskParams,
  ByToolInvocationsParams,
  ByToolStatsParams,
  DedupParams,
  ExpensiveParams,
  FailedParams,
  IdenticalOutputsParams,
  SequencesParams,
  SlowParams,
  TaskListParams,
  ToolOutputsParams,
  ToolSeriesParams,
  ToolsSummaryParams,
  ViolationsParams,
  QuarantineListParams,
  QuarantineShowParams,
  BudgetDecisionsParams,
  CacheSimulationParams,
  TtlCurveParams,
  HintsParams,
  OutputContentParams,
};

/** Every read pattern, ready to call (HTTP routes, CLI, tests). */
export interface ReadQueries {
  tools(p: ToolsSummaryParams): Promise<ToolsSummary>;
  /** Calls and cost per tool and time bucket (the web app's sparklines). */
  toolSeries(p: ToolSeriesParams): Promise<ToolSeries>;
  /** Tasks with calls in the window, newest activity first (the web app's task list). */
  tasks(p: TaskListParams): Promise<TaskList>;
  toolStats(p: ByToolStatsParams): Promise<ToolStats>;
  toolInvocations(p: ByToolInvocationsParams): Promise<InvocationList>;
  toolOutputs(p: ToolOutputsParams): Promise<ToolOutputs>;
  /** A tool_call's proof of inclusion in the audit log, or why there is none. */
  callProof(p: { callId: string }): Promise<InclusionProof | NoProof>;
  /** An output's proof of inclusion in the audit log, or why there is none. */
  outputProof(p: { outputId: string }): Promise<InclusionProof | NoProof>;
  /** A model turn's proof of inclusion in the audit log, or why there is none. */
  turnProof(p: { turnId: string }): Promise<InclusionProof | NoProof>;
  /** An agent run's proof of inclusion in the audit log, or why there is none. */
  runProof(p: { runId: string }): Promise<InclusionProof | NoProof>;
  /** The audit log's signed heads. */
  logHeads(p: LogHeadsParams): Promise<LogHeads>;
  /** A consistency proof between two signed heads; null when either size has none. */
  logConsistency(p: { fromSize: number; toSize: number }): Promise<ConsistencyProof | null>;
  /** One output's full content (at most maxBytes of it); null when unknown or expired. */
  outputContent(p: OutputContentParams): Promise<OutputContent | null>;
  agentTools(p: ByAgentParams): Promise<AgentTools>;
  task(p: ByTaskParams): Promise<TaskView>;
  expensive(p: ExpensiveParams): Promise<Expensive>;
  slow(p: SlowParams): Promise<Slow>;
  failed(p: FailedParams): Promise<Failed>;
  dedup(p: DedupParams): Promise<Dedup>;
  identicalOutputs(p: IdenticalOutputsParams): Promise<IdenticalOutputs>;
  sequences(p: SequencesParams): Promise<Sequences>;
  violations(p: ViolationsParams): Promise<Violations>;
  search(p: SearchParams): Promise<SearchAnswer>;
  /** Quarantined packets, newest first, with their replays. */
  quarantine(p: QuarantineListParams): Promise<QuarantineList>;
  /** One quarantined packet; null when there is none with this id. */
  quarantineRecord(p: QuarantineShowParams): Promise<QuarantineShow | null>;
  /** Budgets in force with their current-period figures (the serving process's budget service answers with reservations). */
  budgets(p: BudgetListParams): Promise<BudgetList>;
  /** Recorded budget decisions, newest first. */
  budgetDecisions(p: BudgetDecisionsParams): Promise<BudgetDecisions>;
  manifest(p: Record<string, never>): Promise<ManifestAnswer>;
  manifestHistory(p: { toolId: string }): Promise<ManifestHistoryAnswer>;
  /** MCP servers the gateway reported, with their tools' definition history. */
  mcpServers(p: Record<string, never>): Promise<McpServers>;
  cacheSimulation(p: CacheSimulationParams): Promise<CacheSimulation>;
  ttlCurve(p: TtlCurveParams): Promise<TtlCurve>;
  /** Optimization hints, newest first. */
  hints(p: HintsParams): Promise<HintsList>;
  /** Model turns per model and per agent, beside each agent's tool cost. */
  modelCost(p: ModelCostParams): Promise<ModelCost>;
}

/** Parameters of {@link ReadQueries.budgets}: none. */
export type BudgetListParams = Record<string, never>;

/** Binds every read pattern to a client, a database and a query context. */
export function createReadQueries(ch: StatementRunner, db: string, ctx: QueryContext): ReadQueries {
  const orphans = new OrphanCallIds(orphanLoader(ch, db, ctx));
  // The hashes every proof against the newest head shares, kept beside the queries that use them.
  const paths = createPathCache();
  return {
    tools: (p) => toolsSummary(ch, db, p, ctx),
    toolSeries: (p) => toolSeries(ch, db, p, ctx),
    tasks: (p) => taskList(ch, db, p, ctx),
    toolStats: (p) => byToolStats(ch, db, p, ctx),
    toolInvocations: (p) => byToolInvocations(ch, db, p, ctx),
    toolOutputs: (p) => toolOutputs(ch, db, p, ctx),
    outputContent: (p) => outputContent(ch, db, p, ctx),
    callProof: (p) => inclusionProof(ch, db, 'tool_call', p.callId.toLowerCase(), ctx, paths),
    outputProof: (p) => inclusionProof(ch, db, 'output', p.outputId.toLowerCase(), ctx, paths),
    turnProof: (p) => inclusionProof(ch, db, 'model_turn', p.turnId.toLowerCase(), ctx, paths),
    runProof: (p) => inclusionProof(ch, db, 'agent_run', p.runId.toLowerCase(), ctx, paths),
    logHeads: (p) => logHeads(ch, db, p, ctx),
    logConsistency: (p) => consistencyProof(ch, db, p, ctx),
    agentTools: (p) => byAgent(ch, db, p, ctx),
    task: (p) => byTask(ch, db, p, ctx, { orphans }),
    expensive: (p) => expensiveCalls(ch, db, p, ctx),
    slow: (p) => slowCalls(ch, db, p, ctx),
    failed: (p) => failedCalls(ch, db, p, ctx),
    dedup: (p) => dedupCandidates(ch, db, p, ctx),
    identicalOutputs: (p) => identicalOutputs(ch, db, p, ctx),
    sequences: (p) => commonSequences(ch, db, p, ctx),
    violations: (p) => violations(ch, db, p, ctx),
    search: (p) => search(ch, db, p, ctx),
    quarantine: (p) => quarantineList(ch, db, p, ctx),
    quarantineRecord: (p) => quarantineShow(ch, db, p, ctx),
    budgets: () => budgetListFromStore(ch, db, Date.now(), ctx),
    budgetDecisions: (p) => budgetDecisions(ch, db, p, ctx),
    manifest: () => currentManifest(ch, db, ctx),
    manifestHistory: (p) => manifestHistory(ch, db, p, ctx),
    mcpServers: () => mcpServers(ch, db, ctx),
    cacheSimulation: (p) => cacheSimulation(ch, db, p, ctx),
    ttlCurve: (p) => ttlCurve(ch, db, p, ctx),
    hints: (p) => hintsList(ch, db, p, ctx),
    modelCost: (p) => modelCost(ch, db, p, ctx),
  };
}

/** Every statement the read API runs, for Grafana panels and documentation. */
export const QUERY_CATALOG: readonly QuerySpec[] = [
  TOOLS_SUMMARY,
  TOOL_P95_DURATIONS,
  TOOL_SERVERS,
  TOOL_SERIES,
  OUTPUT_BY_ID,
  OUTPUT_CONTENT,
  TASK_LIST,
  TASK_LIST_TURNS,
  TASK_NAMES,
  TOOL_STATS,
  TOOL_INVOCATIONS,
  TOOL_OUTPUTS,
  TOOL_OUTPUT_SAMPLES,
  AGENT_TOOL_FREQUENCY,
  AGENT_INVOCATIONS,
  TASK_INVOCATIONS,
  TASK_DEPENDENCIES,
  TASK_OUTPUTS,
  TASK_ROWS,
  TASK_TURNS,
  TASK_RUNS,
  ORPHAN_CALL_IDS,
  TASK_DETAILS,
  EXPENSIVE_CALLS,
  EXPENSIVE_TOTALS,
  SLOW_CALLS,
  SLOW_COUNT,
  FAILED_CALLS,
  FAILED_BY_STATUS,
  FAILED_BY_CATEGORY,
  FREQUENT_ERRORS,
  DEDUP_CANDIDATES,
  DEDUP_CANDIDATES_INDEXED,
  DEDUP_CANDIDATES_EXACT,
  DEDUP_GROUP_NAMES,
  DEDUP_INDEX_STATE,
  IDENTICAL_OUTPUT_GROUPS,
  IDENTICAL_OUTPUT_CALLS,
  COMMON_SEQUENCES,
  VIOLATIONS,
  VIOLATION_COUNTS,
  VIOLATION_TASKS,
  QUARANTINE_LIST,
  QUARANTINE_COUNTS,
  QUARANTINE_BY_ID,
  QUARANTINE_REPLAYS,
  BUDGET_SET_LATEST,
  BUDGET_SPEND,
  BUDGET_DECISIONS,
  MANIFEST_VERSIONS,
  MCP_SERVER_TOOLS,
  CACHE_SIMULATION,
  CACHE_SIMULATION_INDEXED,
  CACHE_TTL_CURVE,
  CACHE_TTL_CURVE_INDEXED,
  TOOL_IDEMPOTENT,
  HINTS_LIST,
  MODEL_COST,
  CACHE_TTL_CURVE_PER_TOOL,
  HINT_BUNDLES,
  HINT_RETRIES,
];
