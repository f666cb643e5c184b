// Vite and Vitest configuration: the viewer site (`vite build --mode viewer-site`), the demo page
// (`--mode demo`) and the
// test projects (engine and server tests in Node, component tests in jsdom).
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig(({ mode }) => {
  if (mode === 'lib') {
    // The browser entry of the package: components and hooks, 'use client' kept, React, React
    // Query and i18next left to the host app; noVNC stays a chunk of its own, loaded lazily.
    return {
      plugins: [react()],
      build: {
        outDir: here('./dist/react'),
        emptyOutDir: true,
        target: 'es2022',
        sourcemap: true,
        lib: { entry: here('./src/react/index.ts'), formats: ['es'], fileName: () => 'index.js' },
        rollupOptions: {
          external: [/^react($|\/)/, /^react-dom($|\/)/, /^@tanstack\/react-query/, /^i18next/, /^react-i18next/],
          // The entry's own 'use client' directive is kept by the bundler.
          output: { chunkFileNames: '[name]-[hash].js' },
        },
      },
    };
  }
  if (mode === 'element') {
    // <remote-browser-viewer> as one script the viewer site serves at /element.js (issue 44):
    // zod (its tree-shakable build) bundled, nothing left to the page.
    return {
      build: {
        outDir: here('./dist/element-script'),
        emptyOutDir: true,
        target: 'es2022',
        lib: { entry: here('./src/element/index.ts'), formats: ['es'], fileName: () => 'element.js' },
      },
    };
  }
  if (mode === 'demo') {
    return {
      root: here('./src/demo/page'),
      base: '/',
      plugins: [react()],
      build: {
        outDir: here('./dist/demo-page'),
        emptyOutDir: true,
        target: 'es2022',
        rollupOptions: { input: { index: here('./src/demo/page/index.html'), replay: here('./src/demo/page/replay.html') } as Record<string, string> },
      },
    };
  }
  if (mode === 'viewer-site') {
    return {
      root: here('./src/engine/viewer/site'),
      base: '/',
      plugins: [react()],
      build: {
        outDir: here('./dist/viewer-site'),
        emptyOutDir: true,
        // noVNC uses top-level await.
        target: 'es2022',
        rollupOptions: { input: { viewer: here('./src/engine/viewer/site/index.html'), launch: here('./src/engine/viewer/site/launch.html'), replay: here('./src/engine/viewer/site/replay.html') } },
      },
    };
  }
  return {
    plugins: [react()],
    test: {
      reporters: ['default', 'json'],
      outputFile: { json: 'test-results/vitest.json' },
      projects: [
        {
          extends: true,
          test: {
            name: 'node',
            include: ['test/**/*.test.ts'],
            environment: 'node',
            // One throwaway Postgres for the run (RBK_TEST_POSTGRES), for the tests of a cluster.
            globalSetup: ['test/helpers/postgres-global.ts'],
            // Two test files at a time, of any project (one group: the same maxWorkers everywhere).
            // Engine tests start real browsers and displays, which spend much of their time
            // waiting; engines on one host share nothing but their uid claims and X locks
            // (runtime/sandbox/session-uids.ts), and every test holds on a loaded machine, so two
            // at once use both cores (decisions.md 114).
            maxWorkers: 2,
            testTimeout: 60_000,
            hookTimeout: 60_000,
          },
        },
        {
          extends: true,
          test: {
            // Every black-box API test again, with the engine on Postgres instead of SQLite.
            name: 'api-postgres',
            include: ['test/api/**/*.test.ts'],
            environment: 'node',
            env: { RBK_TEST_STORE: 'postgres' },
            globalSetup: ['test/helpers/postgres-global.ts'],
            maxWorkers: 2,
            testTimeout: 60_000,
            hookTimeout: 60_000,
          },
        },
        {
          extends: true,
          test: {
            name: 'components',
            include: ['test/react/**/*.test.tsx'],
            environment: 'jsdom',
            setupFiles: ['test/react/setup.ts'],
            maxWorkers: 2,
            testTimeout: 60_000,
            hookTimeout: 60_000,
          },
        },
      ],
    },
  };
});
