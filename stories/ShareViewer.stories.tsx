// <ShareViewer> on each screen (waiting, running, ended, gone, service unreachable) in every
// language, reading a stand-in of the share API through its `fetch` prop.
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo } from 'react';
import { expect, fn, userEvent, within } from 'storybook/test';
import { SHARE_LANGUAGES, type ShareLanguage } from '../src/protocol/index.js';
import { resources } from '../src/react/i18n.js';
import { ShareViewer } from '../src/react/ShareViewer.js';
import { LEAVE_URL, SHARE_LINK_ID, shareApiFetch, type ShareScenario } from './fixtures.js';

interface ViewerStoryProps {
  /** The link's viewer language (its `<lang>` segment). */
  language: ShareLanguage;
  /** What the share API says about the session. */
  scenario: ShareScenario;
  viewOnly: boolean;
  /** What the share API says of the link: false for a view-only link. */
  control: boolean;
  /** How many people the share API says are watching. */
  viewers: number;
  /** Whether the share API says the session has sound. */
  sound: boolean;
  /** The toolbar choice (issue 44): compact (the default, decisions.md 180), full, none. */
  toolbar: 'full' | 'compact' | 'none';
  /** The viewer's width in px (a phone's 390); 0: the canvas's. */
  width: number;
  onLeave: (leaveUrl: string) => void;
}

/** The viewer for a share link on this page's origin, answered by the share API stand-in. */
function ViewerStory({ language, scenario, viewOnly, control, viewers, sound, toolbar, width, onLeave }: ViewerStoryProps) {
  const shareFetch = useMemo(() => shareApiFetch(scenario, 'Chromium', { control, viewers, sound }), [scenario, control, viewers, sound]);
  // The live screen's VNC connection goes to this origin, where nothing answers it: it shows
  // its reconnecting state, with the toolbar.
  const shareUrl = `${window.location.origin}/share-stand-in/${language}/s?${SHARE_LINK_ID}`;
  return (
    <div style={{ height: width ? 700 : 420, ...(width ? { width } : {}), border: '1px solid #d0d7de' }}>
      <ShareViewer key={`${scenario}-${language}-${control}-${sound}`} shareUrl={shareUrl} fetch={shareFetch} viewOnly={viewOnly} toolbar={toolbar} onLeave={onLeave} />
    </div>
  );
}

const meta = {
  title: 'Components/ShareViewer',
  component: ViewerStory,
  args: { language: 'en', scenario: 'waiting', viewOnly: false, control: true, viewers: 1, sound: false, toolbar: 'compact', width: 0, onLeave: fn() },
  argTypes: {
    toolbar: { control: 'inline-radio', options: ['full', 'compact', 'none'] },
    language: { control: 'select', options: [...SHARE_LANGUAGES] },
    scenario: { control: 'select', options: ['waiting', 'running', 'ended', 'gone', 'unreachable'] },
  },
} satisfies Meta<typeof ViewerStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const text = (language: ShareLanguage) => resources[language].viewer;

export const Waiting: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByRole('heading', { name: text(args.language).waiting.title })).toBeVisible();
    await expect(canvas.getByRole('progressbar', { name: text(args.language).waiting.progress })).toBeVisible();
  },
};

/** A running session with the default toolbar, one row (decisions.md 180): "More" opens the input controls over the screen. */
export const Running: Story = {
  args: { scenario: 'running' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(await canvas.findByRole('toolbar', { name: t.toolbar.label })).toBeVisible();
    const more = await canvas.findByRole('button', { name: t.toolbar.more });
    await expect(canvas.queryByRole('button', { name: t.toolbar.paste })).toBeNull();
    await userEvent.click(more);
    await expect(await canvas.findByRole('button', { name: t.toolbar.paste })).toBeVisible();
    await userEvent.click(canvas.getByRole('button', { name: t.leave }));
    await expect(args.onLeave).toHaveBeenCalledWith(LEAVE_URL);
  },
};

/** The full toolbar (issue 44), asked for by name: every control written out, in rows on a wide viewer. */
export const RunningFullToolbar: Story = {
  args: { scenario: 'running', toolbar: 'full' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(await canvas.findByRole('button', { name: t.toolbar.paste })).toBeVisible();
    await expect(canvas.queryByRole('button', { name: t.toolbar.more })).toBeNull();
  },
};

/** The compact toolbar on a 390 px wide viewer (a phone): one floating button at the corner opens every control. */
export const RunningCompactOnPhone: Story = {
  args: { scenario: 'running', toolbar: 'compact', width: 390 },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    const more = await canvas.findByRole('button', { name: t.toolbar.more });
    await expect(more).toBeVisible();
    await expect(canvas.queryByRole('button', { name: t.leave })).toBeNull();
    await userEvent.click(more);
    await expect(canvas.getByRole('button', { name: t.leave })).toBeVisible();
  },
};

/** No toolbar: the page around the viewer gives the commands (the message API). */
export const RunningNoToolbar: Story = {
  args: { scenario: 'running', toolbar: 'none' },
};

export const RunningViewOnly: Story = {
  args: { scenario: 'running', viewOnly: true },
};

/** Three people watch (the full toolbar counts them); "Share view-only" makes a link for watching only and shows it to copy. */
export const SharingViewOnly: Story = {
  args: { scenario: 'running', viewers: 3, toolbar: 'full' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(await canvas.findByText(t.running.canControl)).toBeVisible();
    await expect(canvas.getByText('3 watching')).toBeVisible();
    await userEvent.click(canvas.getByRole('button', { name: t.toolbar.shareViewOnly }));
    const link = (await canvas.findByRole('textbox', { name: t.toolbar.viewOnlyLink })) as HTMLInputElement;
    await expect(link.value).toContain('/en/s?');
  },
};

/** Opened from a view-only link: the viewer watches, whatever its props say. */
export const ViewOnlyLink: Story = {
  args: { scenario: 'running', control: false, viewers: 2 },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(await canvas.findByText(t.running.viewOnly)).toBeVisible();
    await expect(canvas.queryByRole('button', { name: t.toolbar.shareViewOnly })).toBeNull();
  },
};

/**
 * A session with sound: the toolbar's sound control, as this browser allows it (mute and volume;
 * "Tap to hear" where autoplay is blocked; a line where there is no WebCodecs audio). Nothing
 * answers the sound socket here: each state alone is in ShareViewer/Sound.
 */
export const RunningWithSound: Story = {
  args: { scenario: 'running', sound: true },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = resources[args.language].viewer.sound;
    const control = await canvas.findByText((_, element) => [t.tapToHear, t.mute, t.unavailable].includes(element?.textContent ?? '') && element?.children.length === 0);
    await expect(control).toBeVisible();
  },
};

/** Leave goes where the session's callbackUrl says. */
export const Ended: Story = {
  args: { scenario: 'ended' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(await canvas.findByRole('heading', { name: t.ended.title })).toBeVisible();
    await userEvent.click(canvas.getByRole('button', { name: t.leave }));
    await expect(args.onLeave).toHaveBeenCalledWith(LEAVE_URL);
  },
};

/** A deleted session's link: Leave goes to the service's launch page. */
export const Gone: Story = {
  args: { scenario: 'gone' },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(await canvas.findByRole('heading', { name: t.gone.title })).toBeVisible();
    await userEvent.click(canvas.getByRole('button', { name: t.leave }));
    await expect(args.onLeave).toHaveBeenCalledWith(`${window.location.origin}/share-stand-in/`);
  },
};

export const ServiceUnreachable: Story = {
  args: { scenario: 'unreachable' },
  play: async ({ canvasElement, args }) => {
    await expect(await within(canvasElement).findByRole('alert')).toHaveTextContent(text(args.language).error.title);
  },
};

export const WaitingInGerman: Story = { args: { language: 'de' }, play: Waiting.play };
export const EndedInFrench: Story = { args: { language: 'fr', scenario: 'ended' }, play: Ended.play };
export const GoneInSpanish: Story = { args: { language: 'es', scenario: 'gone' }, play: Gone.play };
export const RunningInItalian: Story = { args: { language: 'it', scenario: 'running' }, play: Running.play };
export const WaitingInPortuguese: Story = { args: { language: 'pt' }, play: Waiting.play };
export const EndedInJapanese: Story = { args: { language: 'ja', scenario: 'ended' }, play: Ended.play };

/** Each screen in all seven languages. */
export const EveryLanguage: Story = {
  render: (args) => (
    <div style={{ display: 'grid', gap: '1rem' }}>
      {(['waiting', 'ended', 'gone'] as const).map((scenario) => (
        <div key={scenario} style={{ display: 'grid', gap: '0.5rem', gridTemplateColumns: 'repeat(auto-fill, minmax(18rem, 1fr))' }}>
          {SHARE_LANGUAGES.map((language) => (
            <ViewerStory key={language} {...args} language={language} scenario={scenario} />
          ))}
        </div>
      ))}
    </div>
  ),
};
