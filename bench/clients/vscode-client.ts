import {
  type CancellationToken,
  createMessageConnection,
  type Message,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { createAcpMessageConnection } from "../../src/jsonrpc/index.js";
import type { Child } from "../lib/child.js";

export interface WireHooks {
  incoming?(message: Message, now: number): void;
  outgoing?(message: Message, now: number): void;
}

export interface VscodeClient {
  connection: MessageConnection;
  request(method: string, token?: CancellationToken): Promise<unknown>;
  close(): Promise<void>;
}

/** Starts `connection` and gives it the bench's client shape. */
function listening(connection: MessageConnection, child: Child): VscodeClient {
  connection.listen();
  return {
    connection,
    request: (method, token) =>
      token === undefined ? connection.sendRequest(method, {}) : connection.sendRequest(method, {}, token),
    async close() {
      connection.dispose();
      await child.stop();
    },
  };
}

/** A vscode-jsonrpc client on acp-cancel's binding (ndjson, `$/cancel_request`) over the child's stdio. */
export function connectAcpVscodeClient(child: Child): VscodeClient {
  const connection = createAcpMessageConnection(child.proc.stdout, child.proc.stdin);
  return listening(connection, child);
}

/** A stock vscode-jsonrpc client (Content-Length framing) over the child's stdio. */
export function connectVscodeClient(child: Child, hooks: WireHooks = {}): VscodeClient {
  const reader = new StreamMessageReader(child.proc.stdout);
  const writer = new StreamMessageWriter(child.proc.stdin);
  if (hooks.incoming !== undefined) {
    const listen = reader.listen.bind(reader);
    const seen = hooks.incoming;
    reader.listen = (callback) =>
      listen((message) => {
        seen(message, performance.now());
        callback(message);
      });
  }
  if (hooks.outgoing !== undefined) {
    const write = writer.write.bind(writer);
    const sent = hooks.outgoing;
    writer.write = (message) => {
      sent(message, performance.now());
      return write(message);
    };
  }
  const connection = createMessageConnection(reader, writer);
  return listening(connection, child);
}
