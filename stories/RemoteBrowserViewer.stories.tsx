// <remote-browser-viewer> (issue 44): the framework-free element as a page without React uses it,
// its attributes as controls. Storybook serves no share page, so the frame shows what this origin
// answers at the link's address; what the stories check is the element's own part: the iframe it
// makes (the options after the link id, the allow list, no referrer), its message for a `src`
// that is not a share link, and its styling hooks (`::part(frame)`, --rbk-viewer-* properties).
import type { Meta, StoryObj } from '@storybook/react-vite';
import { createElement } from 'react';
import { expect, waitFor } from 'storybook/test';
import { VIEWER_FRAME_ALLOW } from '../src/element/framed-viewer.js';
import { defineRemoteBrowserViewer } from '../src/element/index.js';
import { SHARE_LINK_ID } from './fixtures.js';

interface ElementStoryProps {
  /** The share link; by default one on this origin. */
  src: string;
  chrome: 'full' | 'compact';
  toolbar: 'full' | 'compact' | 'none';
  viewOnly: boolean;
  language: string;
}

function ElementStory({ src, chrome, toolbar, viewOnly, language }: ElementStoryProps) {
  return (
    <div>
      <style>{`remote-browser-viewer{height:360px;--rbk-viewer-border:1px solid #d0d7de;--rbk-viewer-radius:8px}remote-browser-viewer::part(frame){background:#f6f8fa}`}</style>
      {createElement('remote-browser-viewer', { src, chrome, toolbar, language, ...(viewOnly ? { 'view-only': '' } : {}) })}
    </div>
  );
}

const meta = {
  title: 'Element/RemoteBrowserViewer',
  component: ElementStory,
  args: { src: `${window.location.origin}/share-stand-in/en/s?${SHARE_LINK_ID}`, chrome: 'compact', toolbar: 'compact', viewOnly: false, language: 'en' },
  argTypes: {
    chrome: { control: 'inline-radio', options: ['full', 'compact'] },
    toolbar: { control: 'inline-radio', options: ['full', 'compact', 'none'] },
    language: { control: 'select', options: ['en', 'de', 'fr', 'es', 'it', 'pt', 'ja'] },
  },
} satisfies Meta<typeof ElementStory>;

// Defined by a call, not by the import alone: the package declares src/ free of side effects, so a
// bare import would be dropped from Storybook's build.
defineRemoteBrowserViewer();

export default meta;
type Story = StoryObj<typeof meta>;

/** The element frames the link with the embedder's options after its id. */
export const AShareLink: Story = {
  play: async ({ canvasElement, args }) => {
    const element = canvasElement.querySelector('remote-browser-viewer')!;
    await waitFor(() => expect(element.shadowRoot?.querySelector('iframe')).not.toBeNull());
    const frame = element.shadowRoot!.querySelector('iframe')!;
    await expect(frame.src).toBe(`${args.src}&chrome=compact&toolbar=compact`);
    await expect(frame.allow).toBe(VIEWER_FRAME_ALLOW);
    await expect(frame.referrerPolicy).toBe('no-referrer');
    await expect(frame.getAttribute('part')).toBe('frame');
  },
};

/** Watching only, in German, with no toolbar: the page gives the commands. */
export const ViewOnlyNoToolbar: Story = {
  args: { viewOnly: true, toolbar: 'none', language: 'de' },
  play: async ({ canvasElement, args }) => {
    const element = canvasElement.querySelector('remote-browser-viewer')!;
    await waitFor(() => expect(element.shadowRoot?.querySelector('iframe')).not.toBeNull());
    await expect(element.shadowRoot!.querySelector('iframe')!.src).toBe(`${args.src.replace('/en/s', '/de/s')}&chrome=compact&toolbar=none&view-only`);
  },
};

/** Anything but a share link: a message in the element (`::part(message)`), and no frame. */
export const NotAShareLink: Story = {
  args: { src: 'https://example.com/somewhere' },
  play: async ({ canvasElement }) => {
    const element = canvasElement.querySelector('remote-browser-viewer')!;
    await waitFor(() => expect(element.shadowRoot?.querySelector('[role="alert"]')?.textContent).toMatch(/not a share link/));
    await expect(element.shadowRoot!.querySelector('iframe')).toBeNull();
  },
};
