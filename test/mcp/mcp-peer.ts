import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import {
  type CancellableMcpClient,
  type CancellableMcpClientOptions,
  cancellableMcpClient,
} from "../../src/mcp/index.js";
import { fixturePath } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

/** A real MCP server fixture over stdio, a real SDK client, our binding, and a tap on the wire. */
export interface McpPeer {
  client: Client;
  mcp: CancellableMcpClient<Client>;
  transport: StdioClientTransport;
  sent: JSONRPCMessage[];
  received: JSONRPCMessage[];
  /** What the SDK client reported through `onerror` (late responses land here). */
  errors: Error[];
  /** The server's stderr report lines. */
  lines: string[];
  waitForLine(pattern: RegExp, what?: string): Promise<string>;
  /** `notifications/cancelled` the client sent. */
  cancels(): { requestId: unknown; reason?: unknown }[];
  /** Asks the server how many of its handlers (besides this one) and inner calls are running. */
  serverInFlight(): Promise<{ handlers: number; inner: number }>;
  close(): Promise<void>;
}

export function mcpServerTransport(args: string[] = [], fixture = "mcp-server"): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: [fixturePath(fixture), ...args], stderr: "pipe" });
}

/** Spawns the fixture and wraps a fresh SDK client; connects unless `connect` is false. */
export async function startMcpPeer(
  args: string[] = [],
  options: CancellableMcpClientOptions & { connect?: boolean; fixture?: string } = {},
): Promise<McpPeer> {
  const { connect = true, fixture, ...bindingOptions } = options;
  const transport = mcpServerTransport(args, fixture);
  const sent: JSONRPCMessage[] = [];
  const received: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  const lines: string[] = [];
  let buffer = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    sent.push(message);
    return send(message);
  };
  // The SDK sets onmessage when it connects: record what it is handed.
  let onmessage: StdioClientTransport["onmessage"];
  Object.defineProperty(transport, "onmessage", {
    get: () => onmessage,
    set: (handler: StdioClientTransport["onmessage"]) => {
      onmessage =
        handler === undefined
          ? undefined
          : (message) => {
              received.push(message);
              handler(message);
            };
    },
  });
  const client = new Client({ name: "test-client", version: "1.0.0" });
  client.onerror = (error) => errors.push(error);
  const mcp = cancellableMcpClient(client, bindingOptions);
  if (connect) await mcp.connect(transport);
  const waitForLine = (pattern: RegExp, what = String(pattern)) =>
    eventually(() => lines.find((line) => pattern.test(line)), what);
  return {
    client,
    mcp,
    transport,
    sent,
    received,
    errors,
    lines,
    waitForLine,
    cancels: () =>
      sent
        .filter((m) => "method" in m && m.method === "notifications/cancelled")
        .map((m) => (m as unknown as { params: { requestId: unknown; reason?: unknown } }).params),
    async serverInFlight() {
      const result = await client.callTool({ name: "in_flight", arguments: {} });
      const [first] = result.content as { text: string }[];
      return JSON.parse(first?.text ?? "{}") as { handlers: number; inner: number };
    },
    close: () => client.close(),
  };
}

/** The id the SDK gave the `n`th request of `method` this client sent. */
export function sentId(peer: McpPeer, method: string, n = 0): unknown {
  const requests = peer.sent.filter((m) => "method" in m && m.method === method && "id" in m);
  return (requests[n] as { id?: unknown } | undefined)?.id;
}
