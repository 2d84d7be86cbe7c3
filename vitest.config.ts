import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Embedded ClickHouse (chDB) allows one data directory per process: forks give each file its own process.
    pool: 'forks',
    // Three files at a time on 2 cores: most integration files wait on Kafka, ClickHouse or a child
    // process, so a third fork fills the idle time (measured: one file at a time 8.5 min, three 4.9 min).
    // TOOL_AUDIT_TEST_WORKERS overrides it (e.g. 1 to rule out interference while chasing a flake).
    maxWorkers: Number(process.env['TOOL_AUDIT_TEST_WORKERS'] ?? 3),
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
