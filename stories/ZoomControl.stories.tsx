// The viewer's own zoom (issue 36) in each of its states: a pinch made the view larger than fits
// (how much, and the way back), and the fitted view (nothing shows), in any language. Driven by a
// stand-in of the zoom: a real one follows a pinch on a connected remote screen.
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo, useState } from 'react';
import { I18nextProvider } from 'react-i18next';
import { expect, userEvent, within } from 'storybook/test';
import { SHARE_LANGUAGES, type ShareLanguage } from '../src/protocol/index.js';
import { createComponentI18n } from '../src/react/i18n.js';
import { ZoomControl } from '../src/react/viewer/ZoomControl.js';

interface ZoomStoryProps {
  language: ShareLanguage;
  /** The zoom the view starts at (1: fitted). */
  initial: number;
}

/** The control over a stand-in remote screen, as the live screen lays it. */
function ZoomStory({ language, initial }: ZoomStoryProps) {
  const i18n = useMemo(() => createComponentI18n(language), [language]);
  const [zoom, setZoom] = useState(initial);
  return (
    <I18nextProvider i18n={i18n}>
      <div className="rbk-root rbk-viewer" lang={language} style={{ height: 240 }}>
        <div className="rbk-viewer__live" data-zoom={zoom > 1 ? zoom.toFixed(2) : undefined}>
          <div className="rbk-viewer__screen" role="application" aria-label="Remote browser" />
          <ZoomControl zoom={zoom} onReset={() => setZoom(1)} />
        </div>
      </div>
    </I18nextProvider>
  );
}

const meta = {
  title: 'Components/ShareViewer/Zoom',
  component: ZoomStory,
  args: { language: 'en', initial: 2.5 },
  argTypes: { language: { control: 'select', options: [...SHARE_LANGUAGES] } },
} satisfies Meta<typeof ZoomStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const fit = (language: ShareLanguage, percent: number) => createComponentI18n(language).t('viewer:zoom.fit', { percent });

/** Pinched to 250 %: the button says how much and brings the fitted view back. */
export const Zoomed: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const percent = Math.round(args.initial * 100);
    const button = canvas.getByRole('button', { name: fit(args.language, percent) });
    await expect(canvas.getByRole('status')).toHaveTextContent(String(percent));
    await userEvent.click(button);
    await expect(canvas.queryByRole('button')).toBeNull();
  },
};

/** Zoomed to 300 %, in Japanese. */
export const ZoomedJapanese: Story = { args: { language: 'ja', initial: 3 }, play: Zoomed.play };

/** Fitted: nothing shows. */
export const Fitted: Story = {
  args: { initial: 1 },
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).queryByRole('button')).toBeNull();
  },
};
