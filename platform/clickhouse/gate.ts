/**
 * The order in which statements reach a ClickHouse that runs one at a time.
 *
 * Embedded ClickHouse (chDB) executes one statement at a time per process: whatever is sent
 * first runs first, so an API read used to wait behind every queued scan of a catching-up job.
 * The gate holds statements in JavaScript, one lane per kind of work, and lets the next one go
 * when the running one ends: interactive reads first, then ingest, then background jobs. A read
 * thus waits for at most the one statement already running; the jobs keep their own statements
 * short (bounded slices) so that one is short too. So that a steady stream of reads (a dashboard
 * refreshing, a client reading back to back) does not stop ingest and jobs, a waiting lane gets
 * every `share`-th turn of the lanes above it (default 4: reads keep three turns in four), and a
 * statement that has waited `agingMs` goes next whatever its lane.
 * Pure: no I/O, no timers.
 */

/** Kinds of work, most urgent first. */
const LANES = ['read', 'ingest', 'job'] as const;
/** A kind of work whose statements the gate orders. */
export type Lane = (typeof LANES)[number];

interface Waiter {
  lane: Lane;
  since: number;
  go: () => void;
}

/** What the gate holds now, for metrics and readiness. */
export interface GateState {
  running: number;
  waiting: Record<Lane, number>;
}

/** Lets at most `slots` statements run at once, the most urgent lane first. */
export class StatementGate {
  private running = 0;
  private readonly queues: Record<Lane, Waiter[]> = { read: [], ingest: [], job: [] };
  /** Turns the lanes above a lane took while it waited, since it last went. */
  private readonly passedOver: Record<Lane, number> = { read: 0, ingest: 0, job: 0 };

  constructor(
    private readonly slots: number,
    private readonly agingMs: number,
    private readonly now: () => number = () => performance.now(),
    private readonly share = 4,
  ) {}

  /** Runs `work` when its turn comes; the slot is given back when it settles. */
  async run<T>(lane: Lane, work: () => Promise<T>): Promise<T> {
    await this.enter(lane);
    try {
      return await work();
    } finally {
      this.leave();
    }
  }

  /** Waits for a slot; the caller must call {@link leave} exactly once afterwards. */
  enter(lane: Lane): Promise<void> {
    if (this.running < this.slots && this.waiting() === 0) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queues[lane].push({ lane, since: this.now(), go: resolve }));
  }

  /** Gives a slot back and lets the next statement go. */
  leave(): void {
    this.running--;
    while (this.running < this.slots) {
      const next = this.next();
      if (!next) return;
      this.running++;
      next.go();
    }
  }

  /** Statements running and waiting per lane. */
  state(): GateState {
    return { running: this.running, waiting: { read: this.queues.read.length, ingest: this.queues.ingest.length, job: this.queues.job.length } };
  }

  private waiting(): number {
    return this.queues.read.length + this.queues.ingest.length + this.queues.job.length;
  }

  private next(): Waiter | undefined {
    // The oldest waiter past its aging bound goes first; then the lowest waiting lane whose turn
    // has come (passed over share − 1 times); otherwise lane order. FIFO within a lane.
    const t = this.now();
    let aged: Waiter | undefined;
    for (const lane of LANES) {
      const head = this.queues[lane][0];
      if (head && t - head.since >= this.agingMs && (!aged || head.since < aged.since)) aged = head;
    }
    const due = [...LANES].reverse().find((l) => this.queues[l].length > 0 && this.passedOver[l] >= this.share - 1);
    const lane = aged?.lane ?? due ?? LANES.find((l) => this.queues[l].length > 0);
    if (!lane) return undefined;
    // Every lane below the one going, with statements waiting, has been passed over once more.
    for (const l of LANES.slice(LANES.indexOf(lane) + 1)) if (this.queues[l].length > 0) this.passedOver[l]++;
    this.passedOver[lane] = 0;
    return this.queues[lane].shift();
  }
}
