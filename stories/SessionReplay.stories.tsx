// <SessionReplay> in each state and language, behind a stand-in of the proxy route's recording
// endpoints, playing a real MP4 clip (stories/replay-fixtures.ts).
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo } from 'react';
import { expect, userEvent, waitFor, within } from 'storybook/test';
import { SHARE_LANGUAGES, type ShareLanguage } from '../src/protocol/index.js';
import { resources } from '../src/react/i18n.js';
import { RemoteBrowserProvider } from '../src/react/RemoteBrowserProvider.js';
import { SessionReplay } from '../src/react/SessionReplay.js';
import { REPLAY_ENDPOINT, REPLAY_HANDLE, replayRouteFetch, type ReplayScenario } from './replay-fixtures.js';

interface ReplayStoryProps {
  /** The component's language (the provider's `language`). */
  language: ShareLanguage;
  /** What the route answers. */
  scenario: ReplayScenario;
}

/** The component inside its provider, whose fetch is the route stand-in for the scenario. */
function ReplayStory({ language, scenario }: ReplayStoryProps) {
  const routeFetch = useMemo(() => replayRouteFetch(scenario), [scenario]);
  // A busy service's media is asked for under a handle the build holds no file for: the <video> fails, the route says why.
  const handle = scenario === 'busy' ? 'story-busy' : REPLAY_HANDLE;
  return (
    <RemoteBrowserProvider key={`${scenario}-${language}`} endpoint={REPLAY_ENDPOINT} language={language} fetch={routeFetch}>
      <SessionReplay handle={handle} style={{ maxWidth: 720 }} />
    </RemoteBrowserProvider>
  );
}

const meta = {
  title: 'Components/SessionReplay',
  component: ReplayStory,
  args: { language: 'en', scenario: 'ready' },
  argTypes: {
    language: { control: 'select', options: [...SHARE_LANGUAGES] },
    scenario: { control: 'select', options: ['ready', 'live', 'loading', 'notRecorded', 'removed', 'busy'] },
  },
} satisfies Meta<typeof ReplayStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const text = (language: ShareLanguage) => resources[language].replay;

export const Ready: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const list = await canvas.findByRole('list', { name: text(args.language).events });
    const video = canvasElement.querySelector('video')!;
    // The clip's length known: the video has its metadata.
    await waitFor(() => expect(video.duration).toBeCloseTo(8, 0), { timeout: 10_000 });
    const checkout = within(list).getAllByRole('button')[3]!;
    await userEvent.click(checkout);
    await waitFor(() => expect(checkout).toHaveAttribute('aria-current', 'true'));
    await waitFor(() => expect(video.currentTime).toBeCloseTo(4, 0), { timeout: 5000 });
    await userEvent.click(within(canvas.getByRole('group', { name: text(args.language).speed })).getByRole('button', { name: '2×' }));
    await expect(video.playbackRate).toBe(2);
  },
};

export const ReadyInJapanese: Story = {
  args: { language: 'ja' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByRole('list', { name: text(args.language).events })).toBeVisible();
  },
};

export const StillRecording: Story = {
  args: { scenario: 'live' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByText(text(args.language).live)).toBeVisible();
  },
};

export const Loading: Story = {
  args: { scenario: 'loading' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByText(text(args.language).loading)).toHaveAttribute('role', 'status');
  },
};

export const NotRecorded: Story = {
  args: { scenario: 'notRecorded' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByRole('alert', {}, { timeout: 5000 })).toHaveTextContent(text(args.language).error.not_recorded);
  },
};

export const Removed: Story = {
  args: { scenario: 'removed' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByRole('alert', {}, { timeout: 5000 })).toHaveTextContent(text(args.language).error.removed);
  },
};

export const ServiceBusy: Story = {
  args: { scenario: 'busy' },
  play: async ({ canvasElement, args }) => {
    const alert = await within(canvasElement).findByRole('alert', {}, { timeout: 10_000 });
    await expect(alert).toHaveTextContent(text(args.language).error.busy.replace('{{seconds}}', '30'));
  },
};
