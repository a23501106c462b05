/** What a watch needs of a transport: the close callback the SDK chains to. */
export type ClosingTransport = { onclose?: (() => void) | undefined };
/** An SDK `Protocol` (server or client), as far as a watch reads it. */
export type WatchedProtocol = {
  connect?: (transport: ClosingTransport, ...rest: unknown[]) => Promise<void>;
  transport?: ClosingTransport | undefined;
};

/**
 * Calls `onClose` each time the connection of `target` closes, for its transport now and any it connects to later.
 * The SDKs call a transport's `onclose` before they abort the handlers in flight, so a listener sees the close first.
 */
export function watchConnection(target: WatchedProtocol, onClose: () => void, onConnect: () => void = () => {}): void {
  const watch = (transport: ClosingTransport) => {
    const previous = transport.onclose;
    transport.onclose = () => {
      onClose();
      previous?.();
    };
  };
  if (target.transport !== undefined) watch(target.transport);
  const connect = target.connect?.bind(target);
  if (connect !== undefined) {
    target.connect = (transport, ...rest) => {
      onConnect();
      watch(transport);
      return connect(transport, ...rest);
    };
  }
}
