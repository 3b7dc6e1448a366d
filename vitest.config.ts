import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Engine and bundle tests spawn processes and write temp folders; two cores here.
    pool: 'forks',
    maxWorkers: 2,
  },
});
