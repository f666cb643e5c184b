// remote-browser-kit/engine: the session service to embed in-process. For now the session
// runtime (displays, browsers, egress routes); the HTTP service is built on top of it.
export { SessionRuntime, reapRoot } from './runtime/runtime.js';
export type { RuntimeOptions, RuntimeSession, RuntimeEvent, SessionSpec, StartKind, WarmPoolOptions, ReapReport } from './runtime/runtime.js';
export { discoverImages, IMAGE_DEFINITIONS } from './runtime/catalog.js';
export type { BrowserImage, BrowserFamily } from './runtime/catalog.js';
export { classifyAddress, isAddressAllowed, parseAllowRanges } from './runtime/egress.js';
export type { EgressPolicy, EgressRoute } from './runtime/egress.js';
export { runDoctor } from './doctor.js';
