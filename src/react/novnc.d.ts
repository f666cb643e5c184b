// Types for the part of noVNC the viewer uses (the package ships none).
declare module '@novnc/novnc' {
  const RFB: new (target: HTMLElement, url: string, options?: { shared?: boolean; credentials?: { password?: string } }) => EventTarget;
  export default RFB;
}
