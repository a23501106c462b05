/**
 * A message stream that shows `onWrite` every message before it is written: how the demo's
 * agent sees a prompt's answer leave the process, after the cancellation engine decided it.
 */
import type { MessageStream } from "../../src/index.js";

export function observeWrites(stream: MessageStream, onWrite: (message: unknown) => void): MessageStream {
  const writer = stream.writable.getWriter();
  const writable = new WritableStream<unknown>({
    async write(message) {
      onWrite(message);
      await writer.write(message);
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable: stream.readable, writable };
}
