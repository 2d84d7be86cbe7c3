/**
 * The client's side of the stdio gateway (its stdout): the server's bytes as they come, and the
 * gateway's own lines (refusals) only between whole server lines — a server line split across
 * chunks must not have a refusal land in its middle.
 */
import type { Writable } from 'node:stream';

/** Writes to the client; `paused` is called when it should stop feeding, `resumed` when it may go on. */
export class ClientWriter {
  private atLineStart = true;
  private held: string[] = [];

  constructor(
    private readonly out: Writable,
    private readonly backpressure: { pause(): void; resume(): void },
  ) {}

  /** A chunk of the server's stdout. */
  server(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const lastNewline = chunk.lastIndexOf(0x0a);
    if (this.held.length > 0 && lastNewline !== -1) {
      // Up to the end of the last whole line, then the held lines, then the rest.
      this.write(chunk.subarray(0, lastNewline + 1));
      this.write(this.held.join(''));
      this.held = [];
      if (lastNewline + 1 < chunk.length) this.write(chunk.subarray(lastNewline + 1));
    } else this.write(chunk);
    this.atLineStart = chunk[chunk.length - 1] === 0x0a;
  }

  /** A line of the gateway's own (without its newline), written at the next line boundary. */
  inject(line: string): void {
    if (this.atLineStart) this.write(`${line}\n`);
    else this.held.push(`${line}\n`);
  }

  /** The server's stdout ended: what is held goes out (after a newline if its last line had none). */
  end(): void {
    if (this.held.length === 0) return;
    this.write(`${this.atLineStart ? '' : '\n'}${this.held.join('')}`);
    this.held = [];
    this.atLineStart = true;
  }

  private write(data: Buffer | string): void {
    // A client that reads slowly slows the server down, rather than the gateway buffering without bound.
    if (!this.out.write(data)) {
      this.backpressure.pause();
      this.out.once('drain', () => this.backpressure.resume());
    }
  }
}
