// Types for the part of noVNC the viewer uses (the package ships none).
declare module '@novnc/novnc' {
  /** `urlOrChannel`: the WebSocket address, or a WebSocket already opened (the viewer's video mode filters its messages). */
  const RFB: new (target: HTMLElement, urlOrChannel: string | WebSocket, options?: { shared?: boolean; credentials?: { password?: string } }) => EventTarget;
  export default RFB;
}
