/** Serves an AbpApp over the browser's WebSocket, as JSON text frames: the page dials the agent (a page cannot listen). */
import type { AbpApp } from "./abp-app.js";
import { EnvelopeHost, type EnvelopeHostOptions } from "./envelope-host.js";
import type { ServedApp } from "./post-message-host.js";

export interface WebSocketHostOptions extends EnvelopeHostOptions {
  /** Called when the socket closes, with its close code. */
  onClose?: (code: number) => void;
}

/** Connects to `url` and serves `app` on the socket; resolves once it is open. */
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
