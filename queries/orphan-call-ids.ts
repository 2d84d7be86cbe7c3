/**
 * The calls that have an output stored without its task (orphan_outputs, migration 007), kept in
 * memory for the task view. A snapshot is read at most every `refreshMs` (in the background after
 * the first); every task view also reads the tail of orphan_outputs from the snapshot's cutoff
 * (ClickHouse's clock at the snapshot minus `marginMs`), so an orphan is found however recent:
 * whatever was ingested before the cutoff was visible when the snapshot was read, as long as no
 * insert takes longer than the margin to become visible.
 */
import { setSliced } from '../platform/cooperative.ts';
import { runQuery, type QueryContext, type QuerySpec, type StatementRunner } from './sql.ts';

/**
 * Every orphan's call and ClickHouse's clock now. The call_ids come as one space-separated string,
 * not an array: a JSON array of 128 k ids (bench:history at 30 M calls) was parsed in one go,
 * holding the event loop for ~0.1–0.2 s every refresh.
 */
export const ORPHAN_CALL_IDS: QuerySpec = {
  name: 'orphan_call_ids',
  description: 'The call_ids of outputs stored without their task (orphans), space-separated, and the server time.',
  sql: `SELECT arrayStringConcat(groupUniqArray(toString(call_id)), ' ') AS ids, toUnixTimestamp64Milli(now64(3)) AS now_ms FROM {db:Identifier}.orphan_outputs`,
  params: { db: 'the database' },
};

/** What a snapshot read returns. */
export interface OrphanSnapshot {
  ids: string[];
  nowMs: number;
}

/** Reads the snapshot from ClickHouse. */
export function orphanLoader(ch: StatementRunner, db: string, ctx: QueryContext): () => Promise<OrphanSnapshot> {
  return async () => {
    const [r] = await runQuery<{ ids: string; now_ms: number | string }>(ch, ORPHAN_CALL_IDS, { db }, ctx);
    return { ids: r?.ids ? r.ids.split(' ') : [], nowMs: Number(r?.now_ms ?? 0) };
  };
}

/** In-memory orphan call_ids: a snapshot plus the tail each reader reads itself. */
export class OrphanCallIds {
  private ids = new Set<string>();
  private cutoffMs = 0;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly load: () => Promise<OrphanSnapshot>,
    private readonly opts: { refreshMs: number; marginMs: number } = { refreshMs: 30_000, marginMs: 300_000 },
  ) {}

  /**
   * Where the reader's tail starts (epoch ms, ClickHouse's clock): orphans ingested from then on
   * are the reader's to read; older ones are in {@link has}. The first call waits for a snapshot.
   */
  async tailStart(): Promise<number> {
    if (this.loadedAt === Number.NEGATIVE_INFINITY) await this.refresh();
    else if (performance.now() - this.loadedAt > this.opts.refreshMs) {
      // The current snapshot stays valid meanwhile: its cutoff only moves when a newer one lands.
      this.refresh().catch(() => undefined);
    }
    return this.cutoffMs;
  }

  /** Whether the snapshot lists the call. */
  has(callId: string): boolean {
    return this.ids.has(callId);
  }

  private refresh(): Promise<void> {
    this.loading ??= this.load()
      .then(async (s) => {
        // Built a slice at a time: a set of 100 k ids is tens of ms of one task otherwise.
        this.ids = await setSliced(s.ids, (id) => id);
        this.cutoffMs = s.nowMs - this.opts.marginMs;
        this.loadedAt = performance.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}
