// The viewer's people panel (issue 36) in each of its states: everyone controls; one driver and
// you watch (ask); you asked and wait; you drive and someone asks (give, release); the owner
// (take); a view-only watcher. In any language, driven by a stand-in of the engine's picture: the
// requests the panel sends change it as the engine would.
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo, useState } from 'react';
import { I18nextProvider } from 'react-i18next';
import { expect, userEvent, within } from 'storybook/test';
import type { PeopleSnapshot } from '../src/core/people.js';
import { SHARE_LANGUAGES, type ControlClientMessage, type ControlPicture, type ShareLanguage } from '../src/protocol/index.js';
import { createComponentI18n, resources } from '../src/react/i18n.js';
import { PeoplePanel } from '../src/react/viewer/PeoplePanel.js';

interface PeopleStoryProps {
  language: ShareLanguage;
  picture: ControlPicture;
}

const ada = { id: 'p-ada', kind: 'person' as const, name: 'Ada Lovelace', owner: true as const };
const guest2 = { id: 'p-two', kind: 'person' as const, guest: 2 };
const guest3 = { id: 'p-three', kind: 'person' as const, guest: 3 };
const base = { type: 'control' as const, viewerKey: 'story-viewer-key-00', idleMs: 30_000 };

/** The engine's answer to a request, as channels/control/driving.ts decides it (enough for the stories). */
function answer(picture: ControlPicture, message: ControlClientMessage): ControlPicture {
  const people = picture.people.map((person) => ({ ...person }));
  const me = people.find((person) => person.id === picture.you)!;
  switch (message.type) {
    case 'ask':
      return { ...picture, people: people.map((person) => (person.id === me.id ? { ...person, asks: true as const } : person)) };
    case 'cancel':
      return { ...picture, people: people.map(({ asks: _asks, ...person }) => person) };
    case 'give': {
      const to = people.find((person) => person.id === message.to)!;
      return { ...picture, driver: { id: to.id, kind: to.kind, ...(to.guest ? { guest: to.guest } : {}) }, people: people.map(({ asks: _asks, ...person }) => person) };
    }
    case 'release':
      return { ...picture, driver: null };
    case 'take':
      return { ...picture, driver: { id: me.id, kind: 'person', name: me.name!, owner: true } };
    default:
      return picture;
  }
}

function PeopleStory({ language, picture: initial }: PeopleStoryProps) {
  const i18n = useMemo(() => createComponentI18n(language), [language]);
  const [picture, setPicture] = useState(initial);
  const snapshot: PeopleSnapshot = { picture, pointer: null, refused: null };
  return (
    <I18nextProvider i18n={i18n}>
      <div className="rbk-root rbk-viewer" lang={language} style={{ height: 'auto' }}>
        <PeoplePanel snapshot={snapshot} onRequest={(message) => setPicture((p) => answer(p, message))} defaultOpen />
      </div>
    </I18nextProvider>
  );
}

const meta = {
  title: 'Components/ShareViewer/People',
  component: PeopleStory,
  args: { language: 'en', picture: { ...base, mode: 'one', you: 'p-two', driver: { id: 'p-three', kind: 'person', guest: 3 }, people: [ada, guest2, guest3] } },
  argTypes: { language: { control: 'select', options: [...SHARE_LANGUAGES] } },
} satisfies Meta<typeof PeopleStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const text = (language: ShareLanguage) => resources[language].viewer.people;

/** Another viewer drives; you ask, and wait. */
export const SomeoneElseDrives: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(canvas.getByRole('status')).toHaveTextContent(t.driverIs.replace('{{name}}', t.guest.replace('{{n}}', '3')));
    await userEvent.click(canvas.getByRole('button', { name: t.ask }));
    await expect(canvas.getByRole('button', { name: t.cancel })).toBeVisible();
  },
};

/** You drive and Guest 2 asks: give it, and the status says who has control now. */
export const YouDriveSomeoneAsks: Story = {
  args: { picture: { ...base, mode: 'one', you: 'p-three', driver: { id: 'p-three', kind: 'person', guest: 3 }, people: [ada, { ...guest2, asks: true }, guest3] } },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await expect(canvas.getByRole('status')).toHaveTextContent(t.youDrive);
    await userEvent.click(canvas.getByRole('button', { name: t.give.replace('{{name}}', t.guest.replace('{{n}}', '2')) }));
    await expect(canvas.getByRole('status')).toHaveTextContent(t.driverIs.replace('{{name}}', t.guest.replace('{{n}}', '2')));
  },
};

/** The owner's viewer: take control back at any time. */
export const Owner: Story = {
  args: { picture: { ...base, mode: 'one', you: 'p-ada', driver: { id: 'p-two', kind: 'person', guest: 2 }, people: [ada, guest2, guest3] } },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const t = text(args.language);
    await userEvent.click(canvas.getByRole('button', { name: t.take }));
    await expect(canvas.getByRole('status')).toHaveTextContent(t.youDrive);
  },
};

/** Nobody drives yet: the first key or click takes it. */
export const NobodyDrives: Story = {
  args: { picture: { ...base, mode: 'one', you: 'p-two', driver: null, people: [guest2, guest3] } },
};

/** Everyone with the link controls (the default mode): the list only. */
export const EveryoneControls: Story = {
  args: { picture: { type: 'control', viewerKey: base.viewerKey, mode: 'shared', you: 'p-two', driver: null, people: [ada, guest2, { id: 'p-prog', kind: 'program', owner: true }] } },
};

/** Watching through a view-only link: no request to make. */
export const Watching: Story = {
  args: { picture: { ...base, mode: 'one', you: 'p-three', driver: { id: 'p-two', kind: 'person', guest: 2 }, people: [guest2, { ...guest3, watching: true }] } },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await expect(canvas.queryByRole('button', { name: text(args.language).ask })).toBeNull();
  },
};
