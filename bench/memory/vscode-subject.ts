import { PassThrough, Writable } from "node:stream";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { IdRange, type MemorySubject, SESSION, tick, until } from "./subject.js";

const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** A stock vscode-jsonrpc client over in-memory streams to a peer that never answers until drained. */
export function vscodeSubject(): MemorySubject {
  const ids = new IdRange();
  let buffered = "";
  const toServer = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      buffered = buffered.length === 0 ? chunk.toString() : buffered + chunk.toString();
      for (;;) {
        const headerEnd = buffered.indexOf("\r\n\r\n");
        if (headerEnd === -1) break;
        const length = Number(/Content-Length: (\d+)/.exec(buffered.slice(0, headerEnd))?.[1]);
        if (buffered.length < headerEnd + 4 + length) break;
        const body = buffered.slice(headerEnd + 4, headerEnd + 4 + length);
        buffered = buffered.slice(headerEnd + 4 + length);
        const id = (JSON.parse(body) as { id?: unknown }).id;
        if (typeof id === "number") ids.add(id);
      }
      callback();
    },
  });
  const fromServer = new PassThrough();
  const connection = createMessageConnection(
    new StreamMessageReader(fromServer),
    new StreamMessageWriter(toServer),
  );
  connection.listen();
  const answer = (id: number) => fromServer.write(frame(JSON.stringify({ jsonrpc: "2.0", id, result: {} })));
  return {
    async load(n) {
      ids.reset();
      const target = ids.seen + n;
      for (let i = 0; i < n; i++) void connection.sendRequest("bench/echo", SESSION);
      await until(() => ids.seen >= target, "the requests to leave");
    },
    async drain() {
      for (let id = ids.min; id <= ids.max; id++) {
        answer(id);
        if ((id - ids.min) % 256 === 255) await tick(); // lets the reader keep up
      }
      const target = ids.seen + 1;
      const marker = connection.sendRequest("bench/marker", {});
      await until(() => ids.seen >= target, "the marker to leave");
      answer(ids.max);
      await marker;
    },
  };
}
