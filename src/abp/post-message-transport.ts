/**
 * ABP over postMessage, from an agent in a browser to an app in another window, iframe or worker, as
 * structured clones. Only the app's window and exact origin are heard, and posted to, never "*".
 */
import { EnvelopeChannel, type EnvelopeChannelOptions } from "./envelope-channel.js";
import { LIMITS, MESSAGE_TYPES, messageValue } from "./app/protocol.js";
import { AbpProtocolError } from "./errors.js";

interface PostMessageTarget {
  postMessage(message: unknown, targetOrigin: string): void;
}

interface WorkerTarget {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  removeEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}

export type PostMessageTransportOptions = EnvelopeChannelOptions
  & (
    | {
      /** The app's window (an iframe's contentWindow, a popup). */
      target: PostMessageTarget;
      /** The app's exact origin: requests go only there, answers are heard only from there. */
      targetOrigin: string;
      /** Where the answers arrive; default this window. */
      receiver?: Pick<WorkerTarget, "addEventListener" | "removeEventListener">;
    }
    | {
      /** A dedicated worker: its messages carry no origin, the object itself is the check. */
      worker: WorkerTarget;
    }
  );

export function postMessageTransport(options: PostMessageTransportOptions): EnvelopeChannel {
  if ("worker" in options) {
    const { worker } = options;
    const listener = (event: MessageEvent) => channel.receive(event.data);
    const channel = new EnvelopeChannel((envelope) => worker.postMessage(envelope), options, () =>
      worker.removeEventListener("message", listener),
    );
    worker.addEventListener("message", listener);
    return channel;
  }
  const { target, targetOrigin } = options;
  if (targetOrigin === "*") throw new TypeError("postMessageTransport needs the app's exact origin, not \"*\"");
  const receiver = options.receiver ?? (globalThis as unknown as WorkerTarget);
  const listener = (event: MessageEvent) => {
    // Each of the event's fields is read once: every read crosses into the browser.
    const { origin } = event;
    if (origin !== targetOrigin) {
      // Other windows' unrelated traffic is none of our business; an ABP envelope from elsewhere is worth a word.
      if (looksLikeAbp(event.data)) {
        options.onError?.(new AbpProtocolError("WRONG_ORIGIN", `ABP message from origin "${origin}" ignored (expected "${targetOrigin}")`));
      }
      return;
    }
    // Another frame of the same origin is not ours. A message posted while the app's page unloads
    // (its last answers, its "closing") arrives with no source at all: the origin vouches for it.
    const { source } = event;
    if (source !== target && source !== null) return;
    channel.receive(event.data);
  };
  const channel = new EnvelopeChannel((envelope) => target.postMessage(envelope, targetOrigin), options, () =>
    receiver.removeEventListener("message", listener),
  );
  receiver.addEventListener("message", listener);
  return channel;
}

function looksLikeAbp(data: unknown): boolean {
  const value = typeof data === "string" && data.length > LIMITS.maxMessageBytes ? undefined : messageValue(data);
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  return typeof type === "string" && (MESSAGE_TYPES as readonly string[]).includes(type);
}
