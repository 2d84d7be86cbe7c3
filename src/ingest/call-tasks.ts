/**
 * The tasks of calls this writer saw recently: call_id → task_id, bounded. Output packets carry
 * no task_id; the writer stamps each output with its call's task when the call came through here
 * first (the emitter sends a call and then its output under the same Kafka key, so they reach the
 * same worker in order). An output whose call is not known here is written with task_id NULL and
 * listed in orphan_outputs (migration 007).
 *
 * Two generations of Maps: new calls go to the young one; when it holds half the capacity it
 * becomes the old one and the previous old one is dropped whole. (Evicting one oldest entry at a
 * time from a single Map is quadratic in V8: deleted entries stay as holes that every
 * `keys().next()` walks past.) It remembers between capacity/2 and capacity calls.
 */
export class CallTasks {
  private young = new Map<string, string>();
  private old = new Map<string, string>();
  private readonly half: number;

  /** @param capacity calls remembered at most; 0 remembers none beyond the current round. */
  constructor(capacity: number) {
    this.half = Math.max(0, Math.floor(capacity / 2));
  }

  /** The task of a call, if known ('' = the call has no task). */
  get(callId: string): string | undefined {
    return this.young.get(callId) ?? this.old.get(callId);
  }

  /** Remembers a call's task ('' = the call has no task: its outputs are stamped '', not unknown). */
  add(callId: string, taskId: string): void {
    if (this.half === 0) return;
    this.young.set(callId, taskId);
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  /** Calls remembered. */
  get size(): number {
    return this.young.size + this.old.size;
  }
}
