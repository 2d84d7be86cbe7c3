/**
 * How a benchmark process runs and ends: `cleanup` (stop the servers and brokers it started)
 * runs once whichever way it ends — done, failed, or stopped by SIGINT/SIGTERM — so nothing is
 * left holding a data directory, a port or a broker.
 */

/** Runs `main`, then `cleanup`, and exits: 0 (or process.exitCode), 1 on failure, 130 on a signal. */
export function runBench(main: () => Promise<void>, cleanup: () => void, log: (s: string) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      cleanup();
      process.exit(130);
    });
  }
  main().then(
    () => {
      cleanup();
      process.exit();
    },
    (err: unknown) => {
      log(`failed: ${(err as Error).stack ?? String(err)}`);
      cleanup();
      process.exit(1);
    },
  );
}
