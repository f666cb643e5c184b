// remote-browser-kit/engine: the session service to embed in-process: createEngine() (the HTTP
// interface, store, accounts and sessions over the runtime), and the runtime itself.
// The engine's parts are optional peers (docs/decisions.md 44): they are checked before any module
// that imports them loads (a static import of a missing package fails before any code runs), so
// an app without them gets one error naming what to install instead of the first missing import.
import { requireEngineParts } from './parts.js';

requireEngineParts('remote-browser-kit/engine');

const [engine, dataDirectory, config, runtime, doctor] = await Promise.all([
  import('./engine.js'),
  import('./data-directory.js'),
  import('./config.js'),
  import('./runtime/index.js'),
  import('./doctor.js'),
]);

export const { createEngine } = engine;
export const { openDataDirectory } = dataDirectory;
export type { Engine, EngineOptions } from './engine.js';
export const DEFAULT_PLANS: typeof import('./config.js').DEFAULT_PLANS = config.DEFAULT_PLANS;
export const { loadEngineConfig, parseEngineConfig } = config;
export type { EngineConfig, ExitLocation, Plan } from './config.js';
export const { SessionRuntime, reapRoot } = runtime;
export type SessionRuntime = import('./runtime/index.js').SessionRuntime;
export type { RuntimeOptions, RuntimeSession, RuntimeEvent, SessionSpec, StartKind, WarmPoolOptions, ReapReport } from './runtime/index.js';
export const { discoverImages, IMAGE_DEFINITIONS } = runtime;
export type { BrowserImage, BrowserFamily } from './runtime/index.js';
export const { classifyAddress, isAddressAllowed, parseAllowRanges } = runtime;
export type { EgressPolicy, EgressRoute } from './runtime/index.js';
export const { runDoctor } = doctor;
