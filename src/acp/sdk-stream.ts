/** The object-level stream an `@agentclientprotocol/sdk` app connects to (structurally typed). */
export interface MessageStream {
  readable: ReadableStream<unknown>;
  writable: WritableStream<unknown>;
}

export function isMessageStream(value: unknown): value is MessageStream {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as MessageStream).readable instanceof ReadableStream &&
    (value as MessageStream).writable instanceof WritableStream
  );
}
