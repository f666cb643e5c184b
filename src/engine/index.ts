// remote-browser-kit/engine: the session service to embed in-process: createEngine() (the HTTP
// interface, store, accounts and sessions over the runtime), and the runtime itself.
export { createEngine, openDataDirectory } from './engine.js';
export type { Engine, EngineOptions } from './engine.js';
export { DEFAULT_PLANS, loadEngineConfig, parseEngineConfig } from './config.js';
export type { EngineConfig, ExitLocation, Plan } from './config.js';
export { SessionRuntime, reapRoot } from './runtime/runtime.js';
export type { RuntimeOptions, RuntimeSession, RuntimeEvent, SessionSpec, StartKind, WarmPoolOptions, ReapReport } from './runtime/runtime.js';
export { discoverImages, IMAGE_DEFINITIONS } from './runtime/catalog.js';
export type { BrowserImage, BrowserFamily } from './runtime/catalog.js';
export { classifyAddress, isAddressAllowed, parseAllowRanges } from './runtime/egress.js';
export type { EgressPolicy, EgressRoute } from './runtime/egress.js';
export { runDoctor } from './doctor.js';
