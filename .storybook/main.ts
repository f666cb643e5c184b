// Storybook for the components: stories under stories/, built offline (`npm run build-storybook`)
// with the project's Vite config; no telemetry.
import type { StorybookConfig } from '@storybook/react-vite';

const config: StorybookConfig = {
  stories: ['../stories/**/*.stories.@(ts|tsx)'],
  addons: ['@storybook/addon-a11y'],
  // The <SessionReplay> stories' MP4 clip, where the component asks the stand-in route for it.
  staticDirs: [{ from: '../stories/replay-route', to: '/replay-route' }],
  framework: { name: '@storybook/react-vite', options: {} },
  core: { disableTelemetry: true },
  async viteFinal(viteConfig) {
    // noVNC (loaded by the viewer's live screen) uses top-level await.
    viteConfig.build = { ...viteConfig.build, target: 'es2022' };
    return viteConfig;
  },
};

export default config;
