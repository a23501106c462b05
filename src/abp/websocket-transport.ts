/** ABP over a WebSocket (`ws` or the browser's), as JSON text frames; its closing rejects everything pending. */
import { EnvelopeChannel, type EnvelopeChannelOptions } from "./envelope-channel.js";
import { AbpProtocolError } from "./errors.js";

/** What both `ws` and the browser's WebSocket offer. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
}

const OPEN = 1;

export function webSocketTransport(socket: WebSocketLike, options: EnvelopeChannelOptions = {}): EnvelopeChannel {
  const channel = new EnvelopeChannel(
    (envelope) => {
      if (socket.readyState !== OPEN) throw new Error("the WebSocket is not open");
      socket.send(JSON.stringify(envelope));
    },
    options,
    () => socket.close(1000, "ABP client closed"),
  );
  socket.addEventListener("message", (event) => {
    // ws hands binary frames over as Buffers: not an ABP envelope.
    if (typeof event.data === "string") channel.receive(event.data);
    else options.onError?.(new AbpProtocolError("INVALID_MESSAGE", "binary frames are not ABP envelopes"));
  });
  socket.addEventListener("close", (event) =>
    channel.fail(`the WebSocket closed (code ${event.code}${event.reason ? `, ${event.reason}` : ""})`),
  );
  if (socket.readyState > OPEN) channel.fail("the WebSocket was already closed");
  return channel;
}
