/**
 * The tasks of calls this writer saw recently: call_id → task_id, bounded, oldest forgotten
 * first. Output packets carry no task_id; the writer stamps each output with its call's task
 * when the call came through here first (the emitter sends a call and then its output under the
 * same Kafka key, so they reach the same worker in order). An output whose call is not known
 * here is written with task_id NULL and listed in orphan_outputs (migration 007).
 */
export class CallTasks {
  private readonly map = new Map<string, string>();

  /** @param capacity calls remembered; 0 remembers none beyond the current round. */
  constructor(private readonly capacity: number) {}

  /** The task of a call, if known. */
  get(callId: string): string | undefined {
    return this.map.get(callId);
  }

  /** Remembers a call's task ('' = the call has no task: its outputs are stamped '', not unknown). */
  add(callId: string, taskId: string): void {
    if (this.capacity <= 0) return;
    // Map keeps insertion order: re-inserting moves a call to the young end.
    this.map.delete(callId);
    this.map.set(callId, taskId);
    if (this.map.size > this.capacity) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }

  get size(): number {
    return this.map.size;
  }
}
