import type { Readable, Writable } from "node:stream";
import { AbstractMessageReader, AbstractMessageWriter, type DataCallback, type Disposable, type Message } from "vscode-jsonrpc/node";
import { describeProblem, escapeControl, isJsonRpcId, NdjsonWriter, preview, readNdjson } from "../wire/index.js";

/** ACP's cancel notification, `{requestId}`. */
export const ACP_CANCEL_METHOD = "$/cancel_request";
/** LSP's, `{id}`: the only one vscode-jsonrpc's receive path knows. */
const LSP_CANCEL_METHOD = "$/cancelRequest";

/** A vscode-jsonrpc reader for ACP's ndjson (`$/cancel_request` read as LSP's); bad lines go to `onError`, never ending it. */
export class NdjsonMessageReader extends AbstractMessageReader {
  constructor(private readonly stream: Readable, private readonly options: { maxLineBytes?: number } = {}) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    const detach = readNdjson(
      this.stream,
      {
        value: (value, line) => {
          if (typeof value === "object" && value !== null && !Array.isArray(value)) callback(translateIncoming(value as Message));
          // The line's start, not the value re-serialised: a deep array would throw, a long line flood the log.
          else this.fireError(new Error(`ignored a line that is not a JSON-RPC object: ${escapeControl(preview(line))}`));
        },
        problem: (problem) => this.fireError(new Error(describeProblem(problem))),
        end: (error) => {
          if (error !== undefined) this.fireError(error);
          this.fireClose();
        },
      },
      this.options,
    );
    return { dispose: detach };
  }
}

function translateIncoming(message: Message): Message {
  const candidate = message as { method?: unknown; params?: { requestId?: unknown }; id?: unknown };
  if (candidate.method !== ACP_CANCEL_METHOD || candidate.id !== undefined) return message;
  const requestId = candidate.params?.requestId;
  if (!isJsonRpcId(requestId) || requestId === null) return message;
  return { jsonrpc: "2.0", method: LSP_CANCEL_METHOD, params: { id: requestId } } as Message;
}

/** A vscode-jsonrpc writer for ACP's newline-delimited JSON, honouring backpressure. */
export class NdjsonMessageWriter extends AbstractMessageWriter {
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
