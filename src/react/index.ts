'use client';
// remote-browser-kit/react: the components. Styles come separately from remote-browser-kit/styles.css.
export { ShareViewer, type ShareViewerProps } from './ShareViewer.js';
