// Test helpers for programs driving sessions (issue 24): the order page a program fills in while a
// person watches (yellow, blue once the order is sent: what the person's viewer sees), and the
// HTTP status of a WebSocket upgrade to an automation address.
import { WebSocket } from 'ws';

export const YELLOW: [number, number, number] = [255, 215, 0];
export const BLUE: [number, number, number] = [30, 60, 200];
/** A point of the page's background on the display, below the browser's own bar and the form. */
export const WATCHED_POINT = [640, 600] as const;

/** A form: the name typed, "Send" clicked, the page thanks and turns blue; "Again" makes it yellow and empty. */
export const ORDER_PAGE = `<!doctype html><title>Order</title>
<body style="margin:0;height:100vh;background:rgb(${YELLOW})">
<form id="order" onsubmit="event.preventDefault(); document.getElementById('result').textContent = 'Thanks, ' + document.getElementById('name').value; document.body.style.background = 'rgb(${BLUE})'">
<input name="name" id="name"><button id="send">Send</button></form><p id="result"></p>
<button id="again" onclick="document.getElementById('result').textContent = ''; document.getElementById('name').value = ''; document.body.style.background = 'rgb(${YELLOW})'">Again</button></body>`;

/** The HTTP status a WebSocket upgrade to `address` is refused with, or 101 when it opens. */
export function upgradeStatus(address: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(address);
    socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.on('open', () => {
      socket.close();
      resolve(101);
    });
    socket.on('error', () => resolve(0));
  });
}

/** The share link id in a create answer's `shareUrl` (`.../s?<id>`). */
export function shareLinkOf(shareUrl: string): string {
  return new URL(shareUrl).search.slice(1);
}
