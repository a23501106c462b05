import type { Writable } from "node:stream";
import { AbstractMessageWriter, type Message, type MessageWriter } from "vscode-jsonrpc/node";
import { NdjsonWriter } from "../wire/index.js";

/** A vscode-jsonrpc writer for ACP's newline-delimited JSON, honouring backpressure. */
export class NdjsonMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private readonly writer: NdjsonWriter;

  constructor(private readonly stream: Writable) {
    super();
    this.writer = new NdjsonWriter(stream);
    stream.on("close", () => this.fireClose());
    stream.on("error", (error) => this.fireError(error));
  }

  write(message: Message): Promise<void> {
    if (this.stream.destroyed || this.stream.writableEnded) return Promise.reject(new Error("the output stream is closed"));
    return this.writer.write(message) ? Promise.resolve() : this.writer.drained();
  }

  end(): void {
    this.writer.end();
  }
}
