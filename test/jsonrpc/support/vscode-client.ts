/** A vscode-jsonrpc client (our binding) over a real agent subprocess, as the jsonrpc tests drive it. */
import { PassThrough } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { type AcpMessageConnectionOptions, createAcpMessageConnection } from "../../../src/jsonrpc/index.js";
import { spawnFixture } from "../../support/spawn-peer.js";

export type Line = Record<string, unknown>;

/**
 * A `data` listener that parses newline-separated JSON lines into `into`. A chunk of a pipe can end
 * inside a line (one longer than the pipe writes atomically), even inside a character: the rest
 * waits for the next chunk.
 */
export const recordLinesInto = (into: Line[]) => {
  let partial = "";
  const decoder = new StringDecoder("utf8");
  return (chunk: Buffer) => {
    const lines = (partial + decoder.write(chunk)).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines.filter(Boolean)) into.push(JSON.parse(line));
  };
};

/** Spawns `fixture` and connects the binding to it, recording the lines the client sends. */
export function vscodeClientFor(fixture: string, args: string[] = [], options: AcpMessageConnectionOptions = {}) {
  const peer = spawnFixture(fixture, args);
  const sent: Line[] = [];
  const recorder = new PassThrough();
  recorder.on("data", recordLinesInto(sent));
  recorder.pipe(peer.child.stdin);
  const connection = createAcpMessageConnection(peer.child.stdout, recorder, options);
  return {
    peer,
    sent,
    connection,
    async openSession() {
      await connection.sendRequest("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await connection.sendRequest<{ sessionId: string }>("session/new", {
        cwd: "/",
        mcpServers: [],
      });
      return sessionId;
    },
    async close() {
      connection.dispose();
      peer.child.stdin.end();
      await peer.exited;
    },
  };
}
