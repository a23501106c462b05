/**
 * A stock vscode-jsonrpc server (Content-Length framing, `$/cancelRequest`) over stdio, or
 * with `--acp` the same server on acp-cancel's binding (ndjson, `$/cancel_request`).
 * The same requests as the SDK bench agent: `bench/echo`, `bench/wait`, `bench/count`, `bench/busy`.
 */
import { performance as nodePerformance } from "node:perf_hooks";
import {
  type CancellationToken,
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { createAcpMessageConnection } from "../../src/jsonrpc/index.js";

const connection = process.argv.includes("--acp")
  ? createAcpMessageConnection(process.stdin, process.stdout)
  : createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
let waiting = 0;
connection.onRequest("bench/echo", () => ({}));
connection.onRequest("bench/count", () => ({ waiting }));
connection.onRequest("bench/busy", () => ({ busyMs: nodePerformance.eventLoopUtilization().active }));
connection.onRequest("bench/wait", async (_params: unknown, token: CancellationToken) => {
  waiting++;
  await new Promise<void>((resolve) => {
    if (token.isCancellationRequested) resolve();
    else token.onCancellationRequested(() => resolve());
  });
  waiting--;
  throw new ResponseError(-32800, "Request cancelled");
});
connection.onClose(() => process.exit(0));
connection.listen();
process.stdin.on("end", () => process.exit(0));
