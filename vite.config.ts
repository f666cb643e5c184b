// Vite and Vitest configuration: one file for the library build and every test project.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Engine tests start real browsers and displays: two cores are shared, so run test files
    // one after another and give real processes time to start.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
