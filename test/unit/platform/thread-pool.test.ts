/**
 * The thread pool (platform/thread-pool.ts) with real worker threads: answers come back to their
 * jobs, transferred buffers move, a thread's error fails its job only (not retryable), and a
 * thread that dies fails the jobs it held as retryable while a fresh thread takes the next ones.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../../platform/errors.ts';
import { createThreadPool, type PoolAnswer, type ThreadPool } from '../../../platform/thread-pool.ts';

type Job = { id: number; n?: number; fail?: boolean; exit?: boolean; bytes?: ArrayBuffer };
type Answer = PoolAnswer & { n: number; bytes?: number };
const ENTRY = new URL('../../fixtures/echo-thread.mjs', import.meta.url);
let pool: ThreadPool<Job, Answer> | undefined;
afterEach(async () => void (await pool?.close()));

describe('thread pool', () => {
  it('answers every job from two threads, moving transferred buffers', async () => {
    pool = createThreadPool<Job, Answer>('echo', ENTRY, 2);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => pool!.run({ n })));
    expect(answers.map((a) => a.n)).toEqual(Array.from({ length: 20 }, (_, n) => n * 2));
    const bytes = new ArrayBuffer(1024);
    const a = await pool.run({ n: 1, bytes }, [bytes]);
    expect(a.bytes).toBe(1024);
    expect(bytes.byteLength).toBe(0); // moved, not copied
  });

  it('fails a job its thread reports as failed, and goes on', async () => {
    pool = createThreadPool<Job, Answer>('echo', ENTRY, 1);
    const err = await pool.run({ fail: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'INTERNAL', retryable: false });
    expect((err as Error).message).toContain('echo thread failed: asked to fail');
    expect((await pool.run({ n: 4 })).n).toBe(8);
  });

  it('fails the jobs of a thread that died as retryable, and starts a fresh one', async () => {
    pool = createThreadPool<Job, Answer>('echo', ENTRY, 1);
    const err = await pool.run({ exit: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INTERNAL', retryable: true });
    expect((err as Error).message).toContain('echo thread stopped');
    expect((await pool.run({ n: 5 })).n).toBe(10);
  });
});
