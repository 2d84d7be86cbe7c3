/**
 * The fixed-capacity queue behind the emitter's buffer: keys and items in two parallel
 * arrays, so queuing a packet allocates nothing and drop-oldest is O(1).
 */

/** A FIFO of fixed capacity: O(1) push and shift, storage allocated once. */
export class Ring<T> {
  private readonly keys: Array<string | undefined>;
  private readonly items: Array<T | undefined>;
  private head = 0;
  size = 0;

  constructor(private readonly cap: number) {
    this.keys = new Array<string | undefined>(cap);
    this.items = new Array<T | undefined>(cap);
  }

  /** Appends; the caller keeps size below the capacity. */
  push(key: string, item: T): void {
    const i = (this.head + this.size) % this.cap;
    this.keys[i] = key;
    this.items[i] = item;
    this.size++;
  }

  /** Removes and returns the oldest entry; the caller checks size first. */
  shift(): { key: string; item: T } {
    const i = this.head;
    const out = { key: this.keys[i] as string, item: this.items[i] as T };
    // Release references so delivered packets can be collected.
    this.keys[i] = undefined;
    this.items[i] = undefined;
    this.head = (i + 1) % this.cap;
    this.size--;
    return out;
  }

  /** Empties the ring. */
  clear(): void {
    while (this.size > 0) this.shift();
  }
}
