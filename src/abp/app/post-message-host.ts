/** Serves an AbpApp over postMessage: only the listed origins are heard, each answer posted to its sender's exact origin. */
import type { AbpApp } from "./abp-app.js";
import { envelope, EnvelopeHost, type EnvelopeHostOptions } from "./envelope-host.js";

/** A window, a worker's global scope, a MessagePort: anything that receives `message` events. */
interface MessageReceiver {
  addEventListener(type: "message" | "pagehide", listener: (event: MessageEvent) => void): void;
  removeEventListener(type: "message" | "pagehide", listener: (event: MessageEvent) => void): void;
  postMessage?: (message: unknown) => void;
}

export interface PostMessageHostOptions extends EnvelopeHostOptions {
  /** Exact origins allowed to call, e.g. "https://agent.example". Workers' messages have origin "". */
  allowedOrigins: readonly string[];
  /** Where to listen; default `globalThis` (the page's window, or a worker's scope). */
  receiver?: MessageReceiver;
}

export interface ServedApp {
  readonly host: EnvelopeHost;
  /** Stops listening. */
  close(): void;
}

type Source = { postMessage(message: unknown, targetOrigin: string): void };

export function servePostMessage(app: AbpApp, options: PostMessageHostOptions): ServedApp {
  const receiver = options.receiver ?? (globalThis as unknown as MessageReceiver);
  const host = new EnvelopeHost(app, options);
  // Agents heard from (told when the page goes away: postMessage has no close), each with its reply while its form holds.
  const agents = new Map<unknown, { origin: string; text: boolean; reply: (envelope: unknown) => void }>();
  const replyTo = (source: Source | null, origin: string, text: boolean) =>
    source !== null && origin !== ""
      ? (envelope: unknown) => source.postMessage(text ? JSON.stringify(envelope) : envelope, origin)
      : (envelope: unknown) => receiver.postMessage?.(text ? JSON.stringify(envelope) : envelope); // a worker answers its owner
  const listener = (event: MessageEvent) => {
    // Each of the event's fields is read once: every read crosses into the browser.
    const { origin } = event;
    if (!options.allowedOrigins.includes(origin)) {
      // Answering an unknown origin would leak that we exist: refuse it here and say so locally.
      host.reject({ code: "WRONG_ORIGIN", message: `message from origin "${origin}" is not allowed` });
      return;
    }
    const { data } = event;
    const source = event.source as Source | null;
    // Answers take the form the request came in: JSON text for text, a structured clone otherwise.
    const text = typeof data === "string";
    const known = source === null ? undefined : agents.get(source);
    if (known !== undefined && known.origin === origin && known.text === text) return host.receive(data, known.reply);
    const reply = replyTo(source, origin, text);
    if (source !== null && known === undefined) agents.set(source, { origin, text, reply });
    host.receive(data, reply);
  };
  const goingAway = () => {
    app.shutdown({ reason: "the app's page is going away" });
    for (const { reply } of agents.values()) reply(envelope("notification", undefined, { event: "closing" }));
    agents.clear();
  };
  receiver.addEventListener("message", listener);
  receiver.addEventListener("pagehide", goingAway);
  return {
    host,
    close: () => {
      receiver.removeEventListener("message", listener);
      receiver.removeEventListener("pagehide", goingAway);
    },
  };
}
