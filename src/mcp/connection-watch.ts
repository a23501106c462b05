/** What a watch needs of a transport: the close callback the SDK chains to. */
export type ClosingTransport = { onclose?: (() => void) | undefined; handleMessage?: unknown };
/** An SDK `Protocol` (server or client), as far as a watch reads it. */
export type WatchedProtocol = {
  connect?: (transport: ClosingTransport, ...rest: unknown[]) => Promise<void>;
  transport?: ClosingTransport | undefined;
};

/**
 * Whether `transport` carries one request only (2.x `PerRequestHTTPServerTransport`, MCP 2026 over Streamable
 * HTTP): its close before the answer is the client closing the request's stream, which is that request's cancel.
 */
export function isSingleExchange(transport: ClosingTransport): boolean {
  return typeof transport.handleMessage === "function";
}

/**
 * Calls `onClose` each time the connection of `target` closes, for its transport now and any it connects to later.
 * The SDKs call a transport's `onclose` before they abort the handlers in flight, so a listener sees the close first.
 */
export function watchConnection(
  target: WatchedProtocol,
  onClose: () => void,
  onConnect: (transport: ClosingTransport) => void = () => {},
): void {
  const watch = (transport: ClosingTransport) => {
    const previous = transport.onclose;
    transport.onclose = () => {
      onClose();
      previous?.();
    };
  };
  if (target.transport !== undefined) {
    onConnect(target.transport);
    watch(target.transport);
  }
  const connect = target.connect?.bind(target);
  if (connect !== undefined) {
    target.connect = (transport, ...rest) => {
      onConnect(transport);
      watch(transport);
      return connect(transport, ...rest);
    };
  }
}
