import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { bindHandlerJob, type CancelReason, Job, jobObserver } from "../core/index.js";
import type { McpEvent } from "./events.js";
import { McpHandling } from "./mcp-call.js";

/** What the scope needs of a handler's `extra`: the per-request signal the SDK aborts (and the id, for traces). */
type HandlerExtra = Pick<RequestHandlerExtra<never, never>, "signal"> & Partial<Pick<RequestHandlerExtra<never, never>, "requestId">>;
type McpRequest = { method: string; params?: { name?: unknown; _meta?: Record<string, unknown> } };
type Handler = (request: McpRequest, extra: HandlerExtra) => unknown;

/** An MCP SDK `Server`, `Client` or `McpServer`: anything with (or holding) `setRequestHandler`. */
type HandlerRegistry = { setRequestHandler: (schema: never, handler: never) => void };
export type McpHandlerHost = HandlerRegistry | { server: HandlerRegistry };

export interface McpHandlerScopeOptions {
  onEvent?: (event: McpEvent) => void;
}

export interface McpHandlerScope {
  /** Requests whose handler has not finished; zero at quiescence. */
  readonly inFlight: number;
}

/** The SDK aborts every handler with a ConnectionClosed McpError when the connection goes. */
const CONNECTION_CLOSED = -32000;

function reasonOf(signal: AbortSignal): CancelReason {
  const code = (signal.reason as { code?: unknown } | undefined)?.code;
  return code === CONNECTION_CLOSED ? "shutdown" : "external";
}

/**
 * Makes each request handler registered on an MCP SDK server (or client) from now on run as
 * a job of the tree: `jobOf(extra)` returns it, to pass on as `parent` to any binding's call,
 * and the SDK's abort of `extra.signal` (the peer's `notifications/cancelled`, or the
 * connection closing) cancels that job and its whole subtree. An MCP server that is itself an
 * ACP client, or calls other MCP servers, cascades that way. Call it before registering
 * tools; for an `McpServer`, the scope goes on its inner `server`.
 */
export function scopeMcpHandlers(host: McpHandlerHost, options: McpHandlerScopeOptions = {}): McpHandlerScope {
  const target = ("server" in host ? host.server : host) as unknown as {
    setRequestHandler: (schema: unknown, handler: Handler) => void;
  };
  const { onEvent } = options;
  const running = new Set<Job<McpHandling>>();
  const setRequestHandler = target.setRequestHandler.bind(target);
  target.setRequestHandler = (schema, handler) => {
    setRequestHandler(schema, async (request, extra) => {
      const { signal } = extra;
      const job = new Job(new McpHandling(request.method));
      if (jobObserver !== undefined) traceHandling(job, request, extra);
      bindHandlerJob(signal, job);
      running.add(job);
      const onAbort = () => {
        const reason = reasonOf(signal);
        job.cancel(reason);
        onEvent?.({ type: "handler-cancelled", method: request.method, reason, at: performance.now() });
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      try {
        return await handler(request, extra);
      } finally {
        signal.removeEventListener("abort", onAbort);
        job.settle();
        running.delete(job);
      }
    });
  };
  return {
    get inFlight() {
      return running.size;
    },
  };
}

/** Tells the observer about a handler's job, joined to the sender's trace by `params._meta` (SEP-414). */
function traceHandling(job: Job<McpHandling>, request: McpRequest, extra: HandlerExtra): void {
  const tool = request.method === "tools/call" ? request.params?.name : undefined;
  jobObserver?.onStart(job, {
    protocol: "mcp",
    method: request.method,
    id: extra.requestId,
    kind: "server",
    carrier: request.params?._meta,
    attributes: typeof tool === "string" ? { "gen_ai.tool.name": tool } : undefined,
  });
}
