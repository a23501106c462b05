/**
 * An agent running in a browser page, reaching the demo app in a cross-origin iframe over
 * postMessage. The test drives it through `window.agent` (a CallHarness).
 *   agent.html?app=<app page URL>&stranger=<URL of a page of a third origin>
 */
import { AbpClient, postMessageTransport } from "../../../src/abp/index.js";
import { CallHarness } from "./call-harness.js";

const query = new URLSearchParams(location.search);
const appUrl = new URL(query.get("app") ?? "", location.href);
const frame = document.querySelector<HTMLIFrameElement>("#app");
const stranger = document.querySelector<HTMLIFrameElement>("#stranger");
if (frame === null || stranger === null) throw new Error("agent.html is missing its frames");

const loaded = new Promise((resolve) => frame.addEventListener("load", resolve, { once: true }));
frame.src = appUrl.href;
const strangerUrl = query.get("stranger");
if (strangerUrl !== null) stranger.src = strangerUrl;
await loaded;
const target = frame.contentWindow;
if (target === null) throw new Error("the app frame has no window");

const errors: string[] = [];
const transport = postMessageTransport({ target, targetOrigin: appUrl.origin, onError: (error) => errors.push(`${error.name}: ${error.message}`) });
const client = new AbpClient(transport, { agent: { name: "agent-page", version: "1.0.0" }, onError: (e) => errors.push(e.message) });
const harness = new CallHarness(client);
/** The bench's anchor: `count` bare postMessage round trips of `payload` to the stranger frame, which echoes. */
async function timeBareRoundTrips(count: number, payload: unknown): Promise<number> {
  const peer = stranger?.contentWindow;
  const origin = new URL(strangerUrl ?? "", location.href).origin;
  if (peer === null || peer === undefined) throw new Error("no stranger frame to echo");
  let answered: () => void = () => {};
  // The echo is read, as any caller reads its answer: reading `data` is what deserialises it.
  const onMessage = (event: MessageEvent) => {
    if (event.source === peer && event.origin === origin && typeof event.data === "object") answered();
  };
  addEventListener("message", onMessage);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve) => {
      answered = resolve;
      peer.postMessage(payload, origin);
    });
  }
  const elapsed = performance.now() - started;
  removeEventListener("message", onMessage);
  return elapsed;
}

Object.assign(globalThis, { timeBareRoundTrips, agent: harness, agentErrors: errors, agentTransport: transport });
Object.assign(globalThis, { agentReady: true });
