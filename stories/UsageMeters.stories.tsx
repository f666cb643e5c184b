// <UsageMeters> in every state and language, behind a stand-in of the proxy route's /usage.
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo } from 'react';
import { expect, userEvent, waitFor, within } from 'storybook/test';
import { SHARE_LANGUAGES, type ShareLanguage } from '../src/protocol/index.js';
import { resources } from '../src/react/i18n.js';
import { RemoteBrowserProvider } from '../src/react/RemoteBrowserProvider.js';
import { UsageMeters } from '../src/react/UsageMeters.js';
import { usageRouteFetch, type UsageScenario } from './fixtures.js';

interface MetersStoryProps {
  /** The component's language (the provider's `language`). */
  language: ShareLanguage;
  /** What the route answers. */
  scenario: UsageScenario;
  showPools: boolean;
}

/** The component inside its provider, whose fetch is the route stand-in for the scenario. */
function MetersStory({ language, scenario, showPools }: MetersStoryProps) {
  const routeFetch = useMemo(() => usageRouteFetch(scenario), [scenario]);
  return (
    <RemoteBrowserProvider key={`${scenario}-${language}`} endpoint="/api/remote-browser" language={language} fetch={routeFetch}>
      <UsageMeters showPools={showPools} style={{ maxWidth: 720 }} />
    </RemoteBrowserProvider>
  );
}

const meta = {
  title: 'Components/UsageMeters',
  component: MetersStory,
  args: { language: 'en', scenario: 'ready', showPools: true },
  argTypes: {
    language: { control: 'select', options: [...SHARE_LANGUAGES] },
    scenario: { control: 'select', options: ['loading', 'ready', 'unlimited', 'noResidential', 'twoPools', 'noPlan', 'error', 'notShared', 'growing'] },
  },
} satisfies Meta<typeof MetersStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const text = (language: ShareLanguage) => resources[language].meters;

export const Loading: Story = {
  args: { scenario: 'loading' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByText(text(args.language).loading)).toHaveAttribute('role', 'status');
    await expect(canvasElement.querySelector('.rbk-meters')).toHaveAttribute('data-state', 'loading');
  },
};

export const Ready: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const meter = await canvas.findByRole('meter', { name: text(args.language).running });
    await expect(meter).toHaveAttribute('aria-valuemax', '5');
  },
};

export const UnlimitedPlan: Story = {
  args: { scenario: 'unlimited' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await canvas.findByRole('meter', { name: text(args.language).running });
    await expect(canvas.queryByRole('meter', { name: text(args.language).cycle })).toBeNull();
  },
};

export const NoResidentialData: Story = {
  args: { scenario: 'noResidential' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText(text(args.language).notIncluded)).toBeVisible();
  },
};

export const TwoSubscriptions: Story = {
  args: { scenario: 'twoPools' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const pools = await canvas.findByRole('region', { name: text(args.language).pools });
    await expect(within(pools).getAllByRole('listitem')).toHaveLength(2);
  },
};

export const TwoSubscriptionsTotalsOnly: Story = {
  args: { scenario: 'twoPools', showPools: false },
};

export const NoPlan: Story = {
  args: { scenario: 'noPlan' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByText(text(args.language).noPlan)).toBeVisible();
  },
};

export const RouteUnreachable: Story = {
  args: { scenario: 'error' },
  play: async ({ canvasElement, args }) => {
    const alert = await within(canvasElement).findByRole('alert', {}, { timeout: 5000 });
    await expect(within(alert).getByRole('button', { name: text(args.language).retry })).toBeVisible();
  },
};

export const NotShared: Story = {
  args: { scenario: 'notShared' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByText(text(args.language).notShared, {}, { timeout: 5000 })).toBeVisible();
  },
};

/** Refresh re-reads the meters: the stand-in finds one more running session at each read. */
export const Refresh: Story = {
  args: { scenario: 'growing' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    const running = () => canvas.getByRole('meter', { name: t.running });
    await waitFor(() => expect(running()).toHaveAttribute('aria-valuenow', '1'), { timeout: 5000 });
    const refresh = canvas.getByRole('button', { name: t.refresh });
    await userEvent.click(refresh);
    await waitFor(() => expect(refresh).toHaveAttribute('aria-disabled', 'true'));
    await waitFor(() => expect(running()).toHaveAttribute('aria-valuenow', '2'), { timeout: 5000 });
    await expect(refresh).not.toHaveAttribute('aria-disabled');
  },
};

export const German: Story = { args: { language: 'de' }, play: Ready.play };
export const French: Story = { args: { language: 'fr' }, play: Ready.play };
export const Spanish: Story = { args: { language: 'es' }, play: Ready.play };
export const Italian: Story = { args: { language: 'it' }, play: Ready.play };
export const Portuguese: Story = { args: { language: 'pt' }, play: Ready.play };
export const Japanese: Story = { args: { language: 'ja', scenario: 'twoPools' }, play: TwoSubscriptions.play };

/** The same meters in all seven languages side by side. */
export const EveryLanguage: Story = {
  args: { scenario: 'twoPools', showPools: false },
  render: (args) => (
    <div style={{ display: 'grid', gap: '1rem', gridTemplateColumns: 'repeat(auto-fill, minmax(22rem, 1fr))' }}>
      {SHARE_LANGUAGES.map((language) => (
        <MetersStory key={language} {...args} language={language} />
      ))}
    </div>
  ),
};
