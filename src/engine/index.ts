// remote-browser-kit/engine: the session service to embed in-process: createEngine() (the HTTP
// interface, store, accounts and sessions over the runtime), and the runtime itself.
// The engine's parts are optional peers (docs/decisions.md 44): they are checked before any module
// that imports them loads (a static import of a missing package fails before any code runs), so
// an app without them gets one error naming what to install instead of the first missing import.
import { requireEngineParts } from './parts.js';

requireEngineParts('remote-browser-kit/engine');

const [engine, dataDirectory, config, runtime, catalog, addressPolicy, doctor] = await Promise.all([
  import('./engine.js'),
  import('./data-directory.js'),
  import('./config.js'),
  import('./runtime/runtime.js'),
  import('./runtime/catalog.js'),
  import('./runtime/address-policy.js'),
  import('./doctor.js'),
]);

export const { createEngine } = engine;
export const { openDataDirectory } = dataDirectory;
export type { Engine, EngineOptions } from './engine.js';
export const DEFAULT_PLANS: typeof import('./config.js').DEFAULT_PLANS = config.DEFAULT_PLANS;
export const { loadEngineConfig, parseEngineConfig } = config;
export type { EngineConfig, ExitLocation, Plan } from './config.js';
export const { SessionRuntime, reapRoot } = runtime;
export type SessionRuntime = import('./runtime/runtime.js').SessionRuntime;
export type { RuntimeOptions, RuntimeSession, RuntimeEvent, SessionSpec, StartKind, WarmPoolOptions, ReapReport } from './runtime/runtime.js';
export const { discoverImages, IMAGE_DEFINITIONS } = catalog;
export type { BrowserImage, BrowserFamily } from './runtime/catalog.js';
export const { classifyAddress, isAddressAllowed, parseAllowRanges } = addressPolicy;
export type { EgressPolicy } from './runtime/address-policy.js';
export type { EgressRoute } from './runtime/egress.js';
export const { runDoctor } = doctor;
