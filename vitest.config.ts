import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Embedded ClickHouse (chDB) allows one data directory per process: forks give each file its own process.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
