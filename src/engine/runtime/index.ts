// The session runtime's one entry for the rest of the engine (docs/architecture.md, "runtime").
// The runtime is in rooms, and a room imports only the rooms before it in this list:
// sandbox (where a session's processes run), egress (its route to the network), display (its Xvnc),
// capture (its sound and video encoders), browser (the browser, its policies, languages and zones),
// session (a session's parts started and stopped as a unit, its files, its events), pool (warm
// displays and browsers), then runtime.ts, which starts and stops sessions. Nothing in the runtime
// imports from the rest of the engine but the wire protocol.
export { reapRoot, SessionRuntime, type ReapReport, type RuntimeEvent, type RuntimeOptions, type RuntimeSession, type RecordingSpec, type SessionSpec, type StartKind, type WarmPoolOptions } from './runtime.js';
export { DEFAULT_CONFINEMENT, probeConfinement, type SessionSandbox } from './sandbox/confinement.js';
export { memfdProtection } from './sandbox/exec-guard.js';
export { classifyAddress, isAddressAllowed, parseAllowRanges, type AllowedRange, type EgressPolicy } from './egress/address-policy.js';
export { canonicalHostAddresses, checkTarget, interfaceAddresses, pinnedLookup } from './egress/egress-targets.js';
export { DEFAULT_EGRESS_CONNECTIONS } from './egress/egress-gate.js';
export { EnginePorts, portOfUrl } from './egress/engine-ports.js';
export type { EgressRoute } from './egress/egress.js';
export type { Display } from './display/display.js';
export { DEFAULT_SOUND, probeSound, type SessionSound } from './capture/sound.js';
export { DEFAULT_VIDEO, probeVideo, SessionVideo, type VideoSettings } from './capture/video.js';
export { discoverImages, IMAGE_DEFINITIONS, speaksDevTools, type BrowserFamily, type BrowserImage } from './browser/catalog.js';
export { BUILT_IN_LOCALE, interfaceLocale } from './browser/locales.js';
export { MAX_TITLE, type BrowserTab } from './browser/tabs.js';
export { COUNTRY_TIME_ZONES, cityTimeZone, countryTimeZone, isTimeZone } from './browser/time-zones.js';
export { FileRefusal, SessionFiles, type UploadCaps } from './session/session-files.js';
export type { SessionBiDi, SessionDevTools, SessionEditing, SessionEnds, SessionFolders } from './session/session-ends.js';
export { WARM_ESTIMATE_MB } from './pool/warm-pool.js';
export { keepsHibernationPath, keepsProfilePath, profileFamily, ProfileTooLarge, type ArchiveConsumer, type ArchiveSource, type ProfileCapture, type ProfileFamily, type ProfileRestore } from './session-profile.js';
export { RECORDING_CLOSED, RECORDING_FILES, RECORDING_MEDIA, RECORDING_MP4, RECORDING_START, RECORDING_TIMELINE } from './capture/recording-layout.js';
export { canFreeze } from './sandbox/cgroups.js';
