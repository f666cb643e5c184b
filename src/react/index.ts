'use client';
// remote-browser-kit/react: the components. Styles come separately from remote-browser-kit/styles.css.
export { ShareViewer, type ShareViewerProps } from './ShareViewer.js';
export type { ShareTab, TabAction } from '../protocol/tabs.js';
export { SessionLauncher, type SessionLauncherProps, type LaunchedSession } from './SessionLauncher.js';
export { RemoteBrowserProvider, useRemoteBrowser, type RemoteBrowserProviderProps } from './RemoteBrowserProvider.js';
export { useImages } from './hooks/useImages.js';
export { useSession } from './hooks/useSession.js';
export { useCreateSession, type CreateSessionInput } from './hooks/useCreateSession.js';
export { useEndSession } from './hooks/useEndSession.js';
export { useUsage } from './hooks/useUsage.js';
export { useSessionFiles } from './hooks/useSessionFiles.js';
export { UsageMeters, type UsageMetersProps, type UsageMetersState } from './UsageMeters.js';
export { SessionReplay, formatReplayTime, replayEvents, REPLAY_SPEEDS, type SessionReplayProps, type SessionReplayState, type SessionReplayError, type ReplayEvent } from './SessionReplay.js';
export { useRecording } from './hooks/useRecording.js';
