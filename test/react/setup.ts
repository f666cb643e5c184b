// Component test set-up: jest-dom matchers, a WebSocket that works in jsdom (browser-websocket.ts)
// and a clean DOM after each test.
import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { BrowserWebSocket } from './browser-websocket.js';

Object.defineProperty(globalThis, 'WebSocket', { value: BrowserWebSocket, writable: true, configurable: true });

afterEach(() => cleanup());
