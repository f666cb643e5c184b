// remote-browser-kit/core: the framework-free client of the proxy route: fetcher, query keys,
// queryOptions factories, the error class, and the wire types.
export { createRemoteBrowserClient, createReplayLinkClient, type RemoteBrowserClient, type RemoteBrowserClientOptions, type ReplayLinkClient } from './client.js';
export { RemoteBrowserClientError, fieldOf, type RemoteBrowserErrorCode } from './error.js';
export { imagesQuery, profilesQuery, recordingQuery, RECORDING_REFRESH_MS, remoteBrowserKeys, sessionFilesQuery, sessionPollDelay, sessionQuery, usageQuery } from './queries.js';
export type { SessionFileEntry } from '../protocol/files.js';
export { actOnTab, TabActionRefused, type ShareApiTarget } from './share-api.js';
export type { ShareTab, TabAction } from '../protocol/tabs.js';
export type { ProxyCreateResponse, ProxyProfile, ProxyRecording, ProxyRecordingLink, ProxyRecordingRefusal, ProxySession } from '../protocol/proxy.js';
export type { RecordingTimelineEntry } from '../protocol/recordings.js';
