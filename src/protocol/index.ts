// The service's wire format: types and runtime schemas shared by the engine, the proxy route and
// the components.
export * from './languages.js';
export * from './limits.js';
export * from './v8.js';
export * from './v7.js';
export * from './v6.js';
export * from './share.js';
export * from './share-api.js';
export * from './control.js';
export * from './sound.js';
export * from './video.js';
export * from './statuses.js';
export * from './recordings.js';
export * from './webhooks.js';
export * from './profiles.js';
export * from './tabs.js';
export * from './embed.js';
export * from './embed-messages.js';
