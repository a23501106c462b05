/**
 * Serves an AbpApp over an envelope channel (postMessage, or a WebSocket the page dials): checks each message,
 * dispatches it, answers with the request's envelope id. Bad input gets a `notification` `{event: "error", error,
 * inReplyTo?}`, nothing else.
 */
import type { AbpApp } from "./abp-app.js";
import type { AbpError, NotificationPayload, ProgressPayload } from "../schemas.js";
import { type Envelope, LIMITS, type MessageType } from "./protocol.js";
import { checkAgentMessage } from "./validate.js";

export type Rejection = Pick<AbpError, "code" | "message">;

export interface EnvelopeHostOptions {
  maxMessageBytes?: number;
  /** Told of every message refused (bad envelope, wrong origin…), for logs and tests. */
  onReject?: (rejection: Rejection) => void;
}

export class EnvelopeHost {
  /** Messages refused so far. */
  rejected = 0;

  constructor(private readonly app: AbpApp, private readonly options: EnvelopeHostOptions = {}) {}

  receive(data: unknown, reply: (envelope: Envelope) => void): void {
    const checked = checkAgentMessage(data, this.options.maxMessageBytes ?? LIMITS.maxMessageBytes);
    if (!checked.ok) {
      this.reject({ code: checked.code, message: checked.message });
      const payload: NotificationPayload = { event: "error", error: { code: checked.code, message: checked.message } };
      if (checked.id !== undefined) payload.inReplyTo = checked.id;
      reply(envelope("notification", undefined, payload));
      return;
    }
    const { message } = checked;
    switch (message.type) {
      case "initialize":
        reply(envelope("initialize-result", message.id, this.app.initialize(message.payload)));
        return;
      case "capabilities/call": {
        const { capability, callId, params, options } = message.payload;
        const id = message.id;
        // Progress goes back only for a call that asked for it (the app checks the token too).
        const onProgress = options?.progressToken === undefined
          ? undefined
          : (progress: ProgressPayload) => reply(envelope("progress", undefined, progress));
        const callOptions = options === undefined ? { callId } : { ...options, callId };
        this.app.dispatch(capability, params ?? {}, callOptions, onProgress, (result) => reply(envelope("capabilities/call-result", id, result)));
        return;
      }
      case "capabilities/cancel":
        reply(envelope("capabilities/cancel-result", message.id, this.app.cancel(message.payload.callId, message.payload.reason)));
        return;
      case "shutdown":
        this.app.shutdown(message.payload);
        return;
    }
  }

  /** Counts and reports a refused message (one the host cannot even answer, such as a wrong origin). */
  reject(rejection: Rejection): void {
    this.rejected++;
    this.options.onReject?.(rejection);
  }
}

function envelope(type: MessageType, id: string | undefined, payload: unknown): Envelope {
  return id === undefined ? { type, timestamp: Date.now(), payload } : { type, id, timestamp: Date.now(), payload };
}

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

/** Only the listed origins are heard, each answer posted to its sender's exact origin. */
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

export interface WebSocketHostOptions extends EnvelopeHostOptions {
  /** Called when the socket closes, with its close code. */
  onClose?: (code: number) => void;
}

/** Connects to `url` and serves `app` on the socket, as JSON text frames; resolves once it is open. */
export function serveWebSocket(
  app: AbpApp,
  url: string,
  options: WebSocketHostOptions = {},
): Promise<ServedApp & { socket: WebSocket }> {
  const socket = new WebSocket(url);
  const host = new EnvelopeHost(app, options);
  const reply = (envelope: unknown) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(envelope));
  };
  socket.addEventListener("message", (event: MessageEvent) => {
    if (typeof event.data !== "string") {
      host.reject({ code: "INVALID_MESSAGE", message: "binary frames are not ABP envelopes" });
      return;
    }
    host.receive(event.data, reply);
  });
  socket.addEventListener("close", (event: CloseEvent) => {
    app.shutdown({ reason: "the agent's socket closed" });
    options.onClose?.(event.code);
  });
  return new Promise((resolve, reject) => {
    socket.addEventListener("open", () => resolve({ host, socket, close: () => socket.close(1000, "app closed") }), { once: true });
    socket.addEventListener("error", () => reject(new Error(`could not connect to ${url}`)), { once: true });
  });
}
