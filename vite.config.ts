// Vite and Vitest configuration: the viewer site (`vite build --mode viewer-site`), the demo page
// (`--mode demo`) and the
// test projects: the Node tests in tiers (unit, service, browser, e2e, cluster, package), the API
// tests again on Postgres, the component tests in jsdom.
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The Node test tiers, by what a test starts (issue 54): `unit` nothing of the engine and no
 * browser; `service` the engine on the fake runtime (test/helpers/fake-runtime.ts), or a real one
 * that starts no browser; `browser` real confined browsers (the real runtime, or the API tests'
 * engine process); `e2e` a real viewer in Chromium (needs `npm run build`); `cluster` several
 * engines on Postgres; `package` the built and packed package.
 */
const TIERS = ['unit', 'service', 'browser', 'e2e', 'cluster', 'package'] as const;
type Tier = (typeof TIERS)[number];

/** The folders of test/ whose test files are a tier's, unless TIER_FILES puts one in another. */
const TIER_FOLDERS: Record<Tier, string[]> = {
  unit: ['protocol', 'core', 'channels', 'helpers'],
  service: ['server'],
  browser: ['api', 'engine', 'faults', 'fuzz', 'security'],
  e2e: ['e2e'],
  cluster: ['cluster'],
  package: ['package'],
};

/** Test files in the folder of another tier, by what they start. */
const TIER_FILES: Record<Tier, string[]> = {
  unit: [
    'test/tiers.test.ts',
    ...[
      'automation-bidi-policy', 'automation-policy', 'bidi-hub-bounds', 'browser-reader', 'cycle', 'display-changes', 'egress', 'favicon', 'languages-and-zones', 'node-routes',
      'ogg-opus', 'operations-units', 'parts', 'postgres-database', 'profile-archive', 'session-exits', 'session-lifecycle',
      'session-placement', 'silent-packet', 'sound-pause', 'sound-start', 'status-wait', 'stranger-json', 'video-ladder', 'video-stream',
      'warm-demand',
    ].map((name) => `test/engine/${name}.test.ts`),
    'test/fuzz/view-only-stream.test.ts',
    'test/security/egress-encodings.test.ts',
  ],
  service: [
    // A real engine with no warm pool and sessions that are rows: nothing of a session starts.
    'test/channels/echo-channel.test.ts',
    ...[
      'data-directory-mode', 'default-window', 'embed', 'engine-start', 'operations', 'profile-chunks', 'profile-saves', 'resume-end-race',
      'service', 'webhooks-isolation',
    ].map((name) => `test/engine/${name}.test.ts`),
    'test/security/handles.test.ts',
  ],
  // startTestEngine({}, 'real'): a real confined Chromium behind the proxy route.
  browser: ['test/server/proxy-files.test.ts'],
  // The person's Chromium on the built viewer site (its content security policy).
  e2e: ['test/security/browser.e2e.test.ts'],
  cluster: [],
  package: [],
};

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
  // The Node projects' settings, the same in every tier as in the one `node` project they came
  // from: one throwaway Postgres for the run (RBK_TEST_POSTGRES, for the tests of a cluster and of
  // the store), and two test files at a time, of any project (one group: the same maxWorkers
  // everywhere). Engine tests start real browsers and displays, which spend much of their time
  // waiting; engines on one host share nothing but their uid claims and X locks
  // (runtime/sandbox/session-uids.ts), and every test holds on a loaded machine, so two at once use
  // both cores (decisions.md 114).
  const nodeTier = (name: Tier) => ({
    extends: true as const,
    test: {
      name,
      include: [...TIER_FOLDERS[name].map((folder) => `test/${folder}/**/*.test.ts`), ...TIER_FILES[name]],
      // A file listed under another tier leaves the tier of its folder.
      exclude: [...configDefaults.exclude, ...TIERS.filter((other) => other !== name).flatMap((other) => TIER_FILES[other])],
      environment: 'node' as const,
      globalSetup: ['test/helpers/postgres-global.ts'],
      // The end-to-end tests drive a real viewer's touch and keys, whose timing (noVNC's 1 s tap)
      // a second browser test beside them can stretch past: they run after every other project,
      // one file at a time, so nothing else shares the cores with them (issue 54's flake).
      ...(name === 'e2e' ? { maxWorkers: 1, sequence: { groupOrder: 1 } } : { maxWorkers: 2 }),
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  });
  return {
    plugins: [react()],
    test: {
      reporters: ['default', 'json'],
      outputFile: { json: 'test-results/vitest.json' },
      // The tiers (CONTRIBUTING.md): `vitest run --project unit` and so on; `vitest run` runs them
      // all, with the API tests again on Postgres and the components in jsdom.
      // test/tiers.test.ts checks that every test file is in exactly one tier.
      projects: [
        ...TIERS.map(nodeTier),
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
