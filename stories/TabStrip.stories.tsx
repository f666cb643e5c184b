// The remote browser's tabs above the live screen (issue 36) in any language: a link that may
// drive (switch, close, open, answered by a stand-in of the share API), a view-only link (the same
// tabs, a note that they cannot be changed), and a refused action (its message shown). A tab's icon
// is a data: image, as the engine tells it (decisions.md 112).
import type { Meta, StoryObj } from '@storybook/react-vite';
import { useMemo } from 'react';
import { I18nextProvider } from 'react-i18next';
import { expect, userEvent, within } from 'storybook/test';
import { SHARE_LANGUAGES, type ShareLanguage, type ShareTab } from '../src/protocol/index.js';
import { createComponentI18n, resources } from '../src/react/i18n.js';
import { TabStrip } from '../src/react/viewer/TabStrip.js';

/** The shop's icon as the engine would tell it: a data: image it fetched inside the session. */
const SHOP_ICON = 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PHJlY3Qgd2lkdGg9IjE2IiBoZWlnaHQ9IjE2IiByeD0iMyIgZmlsbD0iIzFhNzNlOCIvPjxwYXRoIGQ9Ik00IDhoOE04IDR2OCIgc3Ryb2tlPSIjZmZmIiBzdHJva2Utd2lkdGg9IjIiLz48L3N2Zz4=';

const TABS: ShareTab[] = [
  { id: 'a', title: 'Order 1042 – Shop', url: 'https://shop.example/orders/1042', active: false, favicon: SHOP_ICON },
  { id: 'b', title: 'Tracking', url: 'https://parcel.example/track', active: true },
  { id: 'c', title: '', url: 'https://help.example/', active: false },
];

interface TabStripStoryProps {
  language: ShareLanguage;
  mayDrive: boolean;
  /** The stand-in refuses every action with this message (empty: it carries them out). */
  refuse: string;
}

/** A stand-in of `POST /share/<link>/tabs`: switches, closes and opens in its own list. */
function standIn(refuse: string): typeof fetch {
  let tabs = TABS.map((tab) => ({ ...tab }));
  return (async (_input: RequestInfo | URL, init?: RequestInit) => {
    if (refuse) return new Response(JSON.stringify({ status: 'denied', message: refuse }), { status: 403 });
    const action = JSON.parse(String(init?.body)) as { action: string; tab?: string };
    if (action.action === 'switch') tabs = tabs.map((tab) => ({ ...tab, active: tab.id === action.tab }));
    if (action.action === 'close') tabs = tabs.filter((tab) => tab.id !== action.tab);
    if (action.action === 'open') tabs = [...tabs.map((tab) => ({ ...tab, active: false })), { id: `n${tabs.length}`, title: '', url: 'about:blank', active: true }];
    return new Response(JSON.stringify({ status: 'ok', tabs }), { status: 200 });
  }) as typeof fetch;
}

function TabStripStory({ language, mayDrive, refuse }: TabStripStoryProps) {
  const i18n = useMemo(() => createComponentI18n(language), [language]);
  const api = useMemo(() => ({ shareBase: window.location.origin, linkId: 'story', fetch: standIn(refuse) }), [refuse]);
  return (
    <I18nextProvider i18n={i18n}>
      <div className="rbk-root rbk-viewer" lang={language} style={{ height: 'auto', maxWidth: 720 }}>
        <TabStrip key={`${language}-${mayDrive}-${refuse}`} tabs={TABS} mayDrive={mayDrive} api={api} />
      </div>
    </I18nextProvider>
  );
}

const meta = {
  title: 'Components/ShareViewer/Tabs',
  component: TabStripStory,
  args: { language: 'en', mayDrive: true, refuse: '' },
  argTypes: { language: { control: 'select', options: [...SHARE_LANGUAGES] } },
} satisfies Meta<typeof TabStripStory>;

export default meta;
type Story = StoryObj<typeof meta>;

const text = (language: ShareLanguage) => resources[language].viewer.tabs;

export const Driving: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    const list = await canvas.findByRole('tablist', { name: text(args.language).label });
    await expect(list).toBeVisible();
    await expect(canvas.getByRole('tab', { name: 'Tracking' })).toHaveAttribute('aria-selected', 'true');
    // A tab's icon is shown from its data: address.
    await expect(canvas.getByRole('tab', { name: 'Order 1042 – Shop' }).querySelector('img')).toHaveAttribute('src', SHOP_ICON);
    // A tab without a title shows its host.
    await expect(canvas.getByRole('tab', { name: 'help.example' })).toBeVisible();
    await userEvent.click(canvas.getByRole('tab', { name: 'Order 1042 – Shop' }));
    await expect(await canvas.findByRole('tab', { name: 'Order 1042 – Shop', selected: true })).toBeVisible();
    // The keyboard: arrows move, Enter switches.
    await userEvent.keyboard('{ArrowRight}{Enter}');
    await expect(await canvas.findByRole('tab', { name: 'Tracking', selected: true })).toBeVisible();
    await expect(canvas.getByRole('button', { name: text(args.language).open })).toBeVisible();
  },
};

export const ViewOnly: Story = {
  args: { mayDrive: false },
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByRole('tab', { name: 'Tracking', selected: true })).toBeVisible();
    await expect(canvas.getByText(text(args.language).viewOnly)).toBeVisible();
    await expect(canvas.queryByRole('button', { name: text(args.language).open })).toBeNull();
  },
};

export const Refused: Story = {
  args: { refuse: 'the browser has no such tab (it may have closed)' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.click(await canvas.findByRole('tab', { name: 'Order 1042 – Shop' }));
    await expect(await canvas.findByRole('status')).toHaveTextContent('the browser has no such tab');
    await expect(canvas.getByRole('tab', { name: 'Tracking' })).toHaveAttribute('aria-selected', 'true');
  },
};
