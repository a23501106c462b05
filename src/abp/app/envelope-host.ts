/**
 * Serves an AbpApp over an envelope channel (postMessage, or a WebSocket the page dials): checks each message,
 * dispatches it, answers with the request's envelope id. Bad input gets a `notification` `{event: "error", error,
 * inReplyTo?}`, nothing else.
 */
import type { AbpApp } from "./abp-app.js";
import type { AbpError, NotificationPayload, ProgressPayload } from "../schemas.js";
import type { Envelope, MessageType } from "./protocol.js";
import { checkAgentMessage } from "./validate.js";

export type Rejection = Pick<AbpError, "code" | "message">;

export interface EnvelopeHostOptions {
  maxMessageBytes?: number;
  /** Told of every message refused (bad envelope, wrong origin…), for logs and tests. */
  onReject?: (rejection: Rejection) => void;
}

type Reply = (envelope: Envelope) => void;

export class EnvelopeHost {
  /** Messages refused so far. */
  rejected = 0;

  constructor(private readonly app: AbpApp, private readonly options: EnvelopeHostOptions = {}) {}

  receive(data: unknown, reply: Reply): void {
    const checked = checkAgentMessage(data, this.options.maxMessageBytes);
    if (!checked.ok) {
      const { code, message, id } = checked;
      this.reject({ code, message });
      const payload: NotificationPayload = { event: "error", error: { code, message } };
      if (id !== undefined) payload.inReplyTo = id;
      return reply(envelope("notification", undefined, payload));
    }
    const { message } = checked;
    switch (message.type) {
      case "initialize":
        return reply(envelope("initialize-result", message.id, this.app.initialize(message.payload)));
      case "capabilities/call": {
        const { capability, callId, params, options } = message.payload;
        // Progress goes back only for a call that asked for it (the app checks the token too).
        const onProgress = options?.progressToken === undefined
          ? undefined
          : (progress: ProgressPayload) => reply(envelope("progress", undefined, progress));
        const answer = (result: unknown) => reply(envelope("capabilities/call-result", message.id, result));
        return this.app.dispatch(capability, params ?? {}, { ...options, callId }, onProgress, answer);
      }
      case "capabilities/cancel": {
        const { callId, reason } = message.payload;
        return reply(envelope("capabilities/cancel-result", message.id, this.app.cancel(callId, reason)));
      }
      case "shutdown":
        return this.app.shutdown(message.payload);
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
  // The agents heard from, each with how it was last answered: told when the page goes away (postMessage has no close).
  const agents = new Map<Source, Reply>();
  const listener = (event: MessageEvent) => {
    const { origin } = event;
    if (!options.allowedOrigins.includes(origin)) {
      // Answering an unknown origin would leak that we exist: refuse it here and say so locally.
      return host.reject({ code: "WRONG_ORIGIN", message: `message from origin "${origin}" is not allowed` });
    }
    const { data } = event; // read (deserialised) only for an allowed origin
    const source = event.source as Source | null;
    // Answers take the form the request came in: JSON text for text, a structured clone otherwise.
    const text = typeof data === "string";
    const reply: Reply = source !== null && origin !== ""
      ? (envelope) => source.postMessage(text ? JSON.stringify(envelope) : envelope, origin)
      : (envelope) => receiver.postMessage?.(text ? JSON.stringify(envelope) : envelope); // a worker answers its owner
    if (source !== null) agents.set(source, reply);
    host.receive(data, reply);
  };
  const goingAway = () => {
    app.shutdown({ reason: "the app's page is going away" });
    for (const reply of agents.values()) reply(envelope("notification", undefined, { event: "closing" }));
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
  const reply = (envelope: Envelope) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(envelope));
  };
  socket.addEventListener("message", (event: MessageEvent) => {
    if (typeof event.data === "string") host.receive(event.data, reply);
    else host.reject({ code: "INVALID_MESSAGE", message: "binary frames are not ABP envelopes" });
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
