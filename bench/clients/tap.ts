/** A stream of JSON-RPC message objects, as the SDK's `ndJsonStream` returns. */
export interface ObjectStream {
  readable: ReadableStream<unknown>;
  writable: WritableStream<unknown>;
}

export interface TapHooks {
  /** A message that just arrived from the wire. */
  incoming?(message: Record<string, unknown>, now: number): void;
  /** A message about to leave for the wire. */
  outgoing?(message: Record<string, unknown>, now: number): void;
}

/**
 * Watches the wire side of an object stream (below any acp-cancel engine, which wraps the
 * stream it is given), so times are taken where bytes leave and arrive.
 */
export function tapStream(stream: ObjectStream, hooks: TapHooks): ObjectStream {
  const readable = stream.readable.pipeThrough(
    new TransformStream<unknown, unknown>({
      transform(message, controller) {
        hooks.incoming?.(message as Record<string, unknown>, performance.now());
        controller.enqueue(message);
      },
    }),
  );
  const writer = stream.writable.getWriter();
  const writable = new WritableStream<unknown>({
    write(message) {
      hooks.outgoing?.(message as Record<string, unknown>, performance.now());
      return writer.write(message);
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable, writable };
}
