/**
 * A bounded map of keys known to be stored, with their fingerprints. Rows are immutable, so an
 * entry never goes stale; the bound only trades memory for ClickHouse look-ups.
 */
export class DedupCache {
  private readonly map = new Map<string, string>();
  constructor(private readonly capacity: number) {}

  /** Fingerprint stored under key, if known. */
  get(key: string): string | undefined {
    return this.map.get(key);
  }

  /** Remembers a stored key; evicts the oldest entries beyond capacity. */
  add(key: string, fingerprint: string): void {
    if (this.capacity === 0) return;
    this.map.set(key, fingerprint);
    if (this.map.size > this.capacity) {
      const oldest = this.map.keys().next().value;
      if (oldest !== undefined) this.map.delete(oldest);
    }
  }

  /** Number of entries held. */
  get size(): number {
    return this.map.size;
  }
}
