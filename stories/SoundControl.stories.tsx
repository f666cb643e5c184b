// The viewer toolbar's sound control in each of its states (playing, muted, blocked until a tap,
// unavailable in this browser, a session without sound) in any language, driven by a stand-in of
// the sound player's state: what a real player does depends on the browser showing the story.
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo, useState } from 'react';
import { I18nextProvider } from 'react-i18next';
import { expect, userEvent, within } from 'storybook/test';
import type { SoundState } from '../src/core/sound-player.js';
import { SHARE_LANGUAGES, type ShareLanguage } from '../src/protocol/index.js';
import { createComponentI18n, resources } from '../src/react/i18n.js';
import { SoundControl } from '../src/react/viewer/SoundControl.js';

interface SoundStoryProps {
  language: ShareLanguage;
  /** The player's state the control starts from. */
  initial: SoundState;
}

/** The control in a toolbar like the viewer's, its stand-in player answering mute, volume and a tap. */
function SoundStory({ language, initial }: SoundStoryProps) {
  const i18n = useMemo(() => createComponentI18n(language), [language]);
  const [state, setState] = useState(initial);
  const sound = {
    ...state,
    setMuted: (muted: boolean) => setState((s) => ({ ...s, muted })),
    setVolume: (volume: number) => setState((s) => ({ ...s, volume })),
    resume: () => setState((s) => ({ ...s, blocked: false, playing: true })),
  };
  return (
    <I18nextProvider i18n={i18n}>
      <div className="rbk-root rbk-viewer" lang={language} style={{ height: 'auto' }}>
        <div className="rbk-viewer__toolbar" role="toolbar" aria-label={resources[language].viewer.toolbar.label}>
          <SoundControl sound={sound} />
        </div>
      </div>
    </I18nextProvider>
  );
}

const playing: SoundState = { available: 'yes', blocked: false, muted: false, volume: 0.8, playing: true };

const meta = {
  title: 'Components/ShareViewer/Sound',
  component: SoundStory,
  args: { language: 'en', initial: playing },
  argTypes: { language: { control: 'select', options: [...SHARE_LANGUAGES] } },
} satisfies Meta<typeof SoundStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const text = (language: ShareLanguage) => resources[language].viewer.sound;

/** Sound plays: mute toggles, the slider says its value. */
export const Playing: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const mute = canvas.getByRole('button', { name: text(args.language).mute });
    await expect(canvas.getByRole('slider', { name: text(args.language).volume })).toHaveAttribute('aria-valuetext', '80 %');
    await userEvent.click(mute);
    await expect(mute).toHaveAttribute('aria-pressed', 'true');
  },
};

/** Muted by the listener (kept from before a reload). */
export const Muted: Story = { args: { initial: { ...playing, muted: true } } };

/** The browser holds sound back until a gesture: one clear button. */
export const TapToHear: Story = {
  args: { initial: { ...playing, blocked: true, playing: false } },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await userEvent.click(canvas.getByRole('button', { name: text(args.language).tapToHear }));
    await expect(canvas.getByRole('button', { name: text(args.language).mute })).toBeVisible();
  },
};

/** No WebCodecs audio (a page on plain http away from localhost, or an older browser). */
export const Unavailable: Story = {
  args: { initial: { ...playing, available: 'no-webcodecs', playing: false } },
  play: async ({ canvasElement, args }) => {
    await expect(within(canvasElement).getByText(text(args.language).unavailable)).toBeVisible();
  },
};

/** A session without sound: the toolbar has no sound control at all. */
export const NoSound: Story = {
  args: { initial: { ...playing, available: 'no-sound', playing: false } },
  play: async ({ canvasElement, args }) => {
    await expect(within(canvasElement).queryByRole('button', { name: text(args.language).mute })).toBeNull();
  },
};

export const TapToHearInJapanese: Story = { args: { ...TapToHear.args, language: 'ja' }, play: TapToHear.play };
export const UnavailableInGerman: Story = { args: { ...Unavailable.args, language: 'de' }, play: Unavailable.play };
