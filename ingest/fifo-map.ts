/**
 * A Map bounded to `capacity` entries that forgets the oldest (by first insertion) beyond it.
 * Setting a key again replaces its value and keeps its place, as Map.set does.
 *
 * Eviction takes the oldest key from a ring of keys, not from the Map's own order: V8 keeps a
 * deleted Map entry as a hole until it rehashes, and `keys().next()` walks past every hole from
 * the front, so evicting one entry per insert that way is quadratic (1 M inserts through a
 * 200 000-entry Map took 80 s).
 */
export class FifoMap<V> {
  private readonly map = new Map<string, V>();
  private readonly ring: Array<string | undefined>;
  private head = 0;

  /** @param capacity entries kept at most; 0 keeps none. */
  constructor(readonly capacity: number) {
    this.ring = new Array<string | undefined>(Math.max(0, Math.floor(capacity)));
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    if (this.ring.length === 0) return;
    if (!this.map.has(key)) {
      const oldest = this.ring[this.head];
      if (oldest !== undefined) this.map.delete(oldest);
      this.ring[this.head] = key;
      this.head = (this.head + 1) % this.ring.length;
    }
    this.map.set(key, value);
  }

  get size(): number {
    return this.map.size;
  }
}
