// <SessionLauncher> in every state and language, behind a stand-in of the proxy route.
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo } from 'react';
import { expect, userEvent, waitFor, within } from 'storybook/test';
import { SHARE_LANGUAGES, type ShareLanguage } from '../src/protocol/index.js';
import { resources } from '../src/react/i18n.js';
import { RemoteBrowserProvider } from '../src/react/RemoteBrowserProvider.js';
import { SessionLauncher } from '../src/react/SessionLauncher.js';
import { launcherRouteFetch, type LauncherScenario } from './launcher-fixtures.js';

interface LauncherStoryProps {
  language: ShareLanguage;
  scenario: LauncherScenario;
  /** Whether the plan includes exit locations. */
  locations: boolean;
  /** Offer the user's saved profiles (issue 34). */
  profiles?: boolean;
}

function LauncherStory({ language, scenario, locations, profiles = false }: LauncherStoryProps) {
  const routeFetch = useMemo(() => launcherRouteFetch(scenario), [scenario]);
  return (
    <RemoteBrowserProvider key={`${scenario}-${language}`} endpoint="/api/remote-browser" language={language} fetch={routeFetch}>
      <SessionLauncher
        style={{ maxWidth: 480 }}
        defaultUrl="https://example.com"
        locations={locations}
        profiles={profiles}
        renderUpgrade={() => (
          <a className="rbk-button rbk-button--primary" href="#pricing">
            See plans
          </a>
        )}
        onOpenViewer={() => undefined}
      />
    </RemoteBrowserProvider>
  );
}

const meta = {
  title: 'Components/SessionLauncher',
  component: LauncherStory,
  args: { language: 'en', scenario: 'ready', locations: true },
  argTypes: {
    language: { control: 'select', options: [...SHARE_LANGUAGES] },
    scenario: { control: 'select', options: ['ready', 'loading', 'withLocations', 'deniedField', 'upgrade', 'rateLimited', 'serviceError', 'unauthorized', 'profiles', 'profileInUse'] },
  },
} satisfies Meta<typeof LauncherStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const text = (language: ShareLanguage) => resources[language].launcher;

async function launch(canvasElement: HTMLElement, language: ShareLanguage) {
  const canvas = within(canvasElement);
  const button = await canvas.findByRole('button', { name: text(language).launch });
  await waitFor(() => expect(button).toBeEnabled());
  await userEvent.click(button);
  return canvas;
}

// Ready (no exit locations, no residential connection) and WithExitLocations (both) are the two
// layouts test/e2e/launcher-layout.e2e.test.ts measures in Chromium.
export const Ready: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const browser = await canvas.findByRole('combobox', { name: text(args.language).browser });
    await waitFor(() => expect(within(browser).getByRole('option', { name: text(args.language).browserUnavailable.replace('{{name}}', 'Google Chrome') })).toBeDisabled());
  },
};

export const Loading: Story = { args: { scenario: 'loading' } };

export const WithExitLocations: Story = {
  args: { scenario: 'withLocations' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const location = await canvas.findByRole('combobox', { name: text(args.language).location });
    await waitFor(() => expect(within(location).getByRole('option', { name: 'Germany' })).toBeInTheDocument());
    await userEvent.selectOptions(location, 'de');
    await expect(canvas.getByRole('combobox', { name: text(args.language).city })).toBeInTheDocument();
  },
};

export const NoLocationAccess: Story = { args: { scenario: 'withLocations', locations: false } };

export const LaunchToRunning: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = await launch(canvasElement, args.language);
    await expect(await canvas.findByRole('progressbar', { name: text(args.language).progress })).toBeInTheDocument();
    await canvas.findByRole('textbox', { name: text(args.language).shareLink }, { timeout: 5000 });
    await userEvent.click(canvas.getByRole('button', { name: text(args.language).end }));
    await expect(await canvas.findByRole('button', { name: text(args.language).another }, { timeout: 8000 })).toBeInTheDocument();
  },
};

export const RefusedField: Story = {
  args: { scenario: 'deniedField' },
  play: async ({ canvasElement, args }) => {
    const canvas = await launch(canvasElement, args.language);
    await waitFor(() => expect(canvas.getByRole('textbox', { name: text(args.language).url })).toHaveAttribute('aria-invalid', 'true'));
  },
};

export const Upgrade: Story = {
  args: { scenario: 'upgrade' },
  play: async ({ canvasElement, args }) => {
    const canvas = await launch(canvasElement, args.language);
    await expect(await canvas.findByRole('link', { name: 'See plans' })).toBeInTheDocument();
  },
};

export const RateLimited: Story = {
  args: { scenario: 'rateLimited' },
  play: async ({ canvasElement, args }) => {
    const canvas = await launch(canvasElement, args.language);
    await waitFor(() => expect(canvas.getByRole('button', { name: text(args.language).retry })).toBeDisabled());
  },
};

export const ServiceError: Story = {
  args: { scenario: 'serviceError' },
  play: async ({ canvasElement, args }) => {
    const canvas = await launch(canvasElement, args.language);
    await expect(await canvas.findByRole('button', { name: text(args.language).retry })).toBeEnabled();
  },
};

export const NotSignedIn: Story = { args: { scenario: 'unauthorized' } };

// Saved profiles (issue 34): the user's profiles for the chosen browser, and whether to save.
export const WithProfiles: Story = {
  args: { scenario: 'profiles', profiles: true },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const picker = await canvas.findByRole('combobox', { name: text(args.language).profile.label });
    await waitFor(() => expect(within(picker).getByRole('option', { name: 'Shop' })).toBeInTheDocument());
    await expect(within(picker).queryByRole('option', { name: 'Research' })).toBeNull();
    await userEvent.selectOptions(picker, 'p_shop');
    await expect(canvas.getByRole('checkbox', { name: text(args.language).profile.save })).toBeChecked();
  },
};

export const ProfileInUse: Story = {
  args: { scenario: 'profileInUse', profiles: true },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const picker = await canvas.findByRole('combobox', { name: text(args.language).profile.label });
    await waitFor(() => expect(within(picker).getByRole('option', { name: 'Shop' })).toBeInTheDocument());
    await userEvent.selectOptions(picker, 'p_shop');
    await launch(canvasElement, args.language);
    await waitFor(() => expect(picker).toHaveAttribute('aria-invalid', 'true'));
  },
};

export const ProfilesJapanese: Story = { args: { scenario: 'profiles', profiles: true, language: 'ja' } };

export const German: Story = { args: { language: 'de' } };
export const French: Story = { args: { language: 'fr' } };
export const Spanish: Story = { args: { language: 'es' } };
export const Italian: Story = { args: { language: 'it' } };
export const Portuguese: Story = { args: { language: 'pt' } };
export const Japanese: Story = { args: { language: 'ja' } };
