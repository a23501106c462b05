/**
 * Guardians for the tests: the real reference guardian recording every raw request, and
 * misbehaving ones (down, hanging, garbage, JSON-RPC error) built on node:http.
 */
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type GuardianLogEntry, type GuardianRules, startGuardian } from "../../src/a2a/index.js";
import { CLI } from "../support/bridge-harness.js";
import { exitAfterOutput } from "../support/spawn-peer.js";

export interface RecordingGuardian {
  url: string;
  requests: unknown[];
  log: GuardianLogEntry[];
  close(): Promise<void>;
}

export async function recordingGuardian(rules: GuardianRules): Promise<RecordingGuardian> {
  const requests: unknown[] = [];
  const log: GuardianLogEntry[] = [];
  const guardian = await startGuardian({ rules, onRequest: (m) => requests.push(m), log: (e) => log.push(e) });
  return { url: guardian.url, requests, log, close: () => guardian.close() };
}

export type Misbehaviour = "down" | "hang" | "garbage" | "rpc-error";
export const MISBEHAVIOURS: readonly Misbehaviour[] = ["down", "hang", "garbage", "rpc-error"];

export interface BadGuardian {
  url: string;
  /** Requests it received (0 for "down"). */
  hits: number;
  /** Their bodies, parsed. */
  requests: unknown[];
  close(): Promise<void>;
}

/** A guardian on loopback that counts its requests and hands each one's whole body to `onBody`. */
async function listeningGuardian(onBody: (body: string, res: http.ServerResponse) => void) {
  const state = { hits: 0 };
  const server = http.createServer((req, res) => {
    state.hits++;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => onBody(Buffer.concat(chunks).toString(), res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, state, url: `http://127.0.0.1:${port}/` };
}

export async function badGuardian(kind: Misbehaviour): Promise<BadGuardian> {
  const sockets = new Set<Socket>();
  const requests: unknown[] = [];
  const { server, state, url } = await listeningGuardian((body, res) => {
    requests.push(JSON.parse(body));
    if (kind === "hang") return; // never answers
    if (kind === "garbage") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("<html>definitely not JSON-RPC</html>");
      return;
    }
    const { id } = JSON.parse(body) as { id: string };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: "guardian exploded" } }));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  if (kind === "down") await close(); // nothing listens on the port any more
  return {
    url,
    get hits() {
      return state.hits;
    },
    requests,
    close: kind === "down" ? async () => {} : close,
  };
}

/** A guardian that answers every request with `answer(request)`: a body string, or a value sent as JSON. */
export async function scriptedGuardian(
  answer: (request: { id: string; method: string }) => unknown,
  status = 200,
): Promise<BadGuardian> {
  const requests: unknown[] = [];
  const { server, state, url } = await listeningGuardian((body, res) => {
    const request = JSON.parse(body) as { id: string; method: string };
    requests.push(request);
    const value = answer(request);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(typeof value === "string" ? value : JSON.stringify(value));
  });
  return {
    url,
    get hits() {
      return state.hits;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `acp-cancel guardian ...` as a child process: its stdout/stderr so far, its exit, and its URL once it listens. */
export interface GuardianCli {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  out(): string;
  err(): string;
  /** Resolves with the URL of the `listening on` line, the moment it is read; rejects if the process exits first. */
  listening(): Promise<string>;
}

export function runGuardianCli(args: string[]): GuardianCli {
  const child = spawn(process.execPath, [CLI, "guardian", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  // Resolved once its output was read to the end too: 'exit' can come before its last lines are read.
  const exited = exitAfterOutput(child, [child.stdout, child.stderr].filter((s) => s !== null));
  const listening = () =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const match = /listening on (http:\/\/\S+\/)/.exec(stderr);
        if (match?.[1] !== undefined) resolve(match[1]);
        else waiters.push(look);
      };
      look();
      void exited.then(() => reject(new Error(`the guardian exited before listening: ${stderr}`)));
    });
  return { child, exited, out: () => stdout, err: () => stderr, listening };
}
