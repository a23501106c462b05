import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { bindHandlerJob, type CancelReason, type Job, type JobInfo } from "../core/index.js";
import { ServerCalls } from "../core/server-calls.js";
import { type ClosingTransport, isSingleExchange, watchConnection, type WatchedProtocol } from "./connection-watch.js";
import type { McpEventOptions } from "./events.js";

/**
 * What the scope needs of a handler's context: the signal the SDK aborts and the request's id. 1.x hands
 * `extra.signal`/`extra.requestId`; 2.x hands `ctx.mcpReq.signal`/`ctx.mcpReq.id` (so there `jobOf(ctx.mcpReq)`).
 */
type HandlerExtra = Partial<Pick<RequestHandlerExtra<never, never>, "signal" | "requestId">> & {
  mcpReq?: { signal: AbortSignal; id?: string | number };
};
type McpParams = { name?: unknown; _meta?: Record<string, unknown> };
type McpRequest = { method: string; params?: McpParams };
type Handler = (request: McpRequest, extra: HandlerExtra) => unknown;

/** An MCP SDK `Server`, `Client` or `McpServer`: anything with (or holding) `setRequestHandler`. */
type HandlerRegistry = { setRequestHandler: (schema: never, handler: never) => void };
/** The SDK `Protocol` the handlers are registered on, as far as the scope reads it. */
type ScopedProtocol = WatchedProtocol & { setRequestHandler: (...args: unknown[]) => void };
export type McpHandlerHost = HandlerRegistry | { server: HandlerRegistry };

export interface McpHandlerScope {
  /** Requests whose handler has not finished; zero at quiescence. */
  readonly inFlight: number;
}

/** Some SDK versions abort every handler with a ConnectionClosed McpError when the connection goes. */
const CONNECTION_CLOSED = -32000;
/** SDK 2.x aborts them with an `SdkError` whose code is this string. */
const CONNECTION_CLOSED_2X = "CONNECTION_CLOSED";

/** A request a handler of this process is answering. */
type McpHandling = { readonly method: string };

/**
 * The cancel reason of a handler's aborted signal. MCP SDK 1.32 aborts handlers without a reason on close, like a
 * reasonless `notifications/cancelled`, so the transport's `onclose` is watched (the SDK calls it before aborting them).
 */
function closeReasons(target: ScopedProtocol): (signal: AbortSignal) => CancelReason {
  let closed = false;
  let singleExchange = false;
  const onConnect = (transport: ClosingTransport) => {
    closed = false;
    singleExchange = isSingleExchange(transport);
  };
  watchConnection(target, () => (closed = true), onConnect);
  return (signal) => {
    // MCP 2026 over Streamable HTTP: the client closing the request's stream is its cancel, not a shutdown.
    if (singleExchange) return "external";
    const code = (signal.reason as { code?: unknown } | undefined)?.code;
    return closed || code === CONNECTION_CLOSED || code === CONNECTION_CLOSED_2X ? "shutdown" : "external";
  };
}

/**
 * Runs each request handler registered from now on (on an MCP SDK server or client; an `McpServer`'s
 * inner `server`) as a job: `jobOf(extra)` is its parent for any binding's call, and the SDK's abort of
 * `extra.signal` cancels its subtree (`external` for the peer's cancel, `shutdown` when the connection closes).
 */
export function scopeMcpHandlers(host: McpHandlerHost, options: McpEventOptions = {}): McpHandlerScope {
  const target = ("server" in host ? host.server : host) as unknown as ScopedProtocol;
  const { onEvent } = options;
  const reasonOf = closeReasons(target);
  const calls = new ServerCalls<never, McpHandling>({ keyOf: () => undefined });
  const setRequestHandler = target.setRequestHandler.bind(target);
  // 1.x: (schema, handler(request, extra)); 2.x: (method, handler(request, ctx)) or (method, schemas, handler(params, ctx)).
  target.setRequestHandler = (...args: unknown[]) => {
    const handler = args[args.length - 1] as Handler;
    const named = typeof args[0] === "string" ? args[0] : undefined;
    const scoped = async (request: McpRequest, extra: HandlerExtra) => {
      const { signal, requestId } = handlerLinks(extra);
      const method = named ?? request.method;
      const describe = () => handlingInfo(method, paramsOf(request, named), requestId);
      const job = calls.start({ method }, undefined, describe) as Job<McpHandling>;
      bindHandlerJob(signal, job);
      const onAbort = () => {
        const reason = reasonOf(signal);
        job.cancel(reason);
        onEvent?.({ type: "handler-cancelled", method, reason, at: performance.now() });
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      try {
        return await handler(request, extra);
      } finally {
        signal.removeEventListener("abort", onAbort);
        calls.done(job);
      }
    };
    setRequestHandler(...args.slice(0, -1), scoped);
  };
  return {
    get inFlight() {
      return calls.size;
    },
  };
}

/** A request's params: 2.x hands a custom method's handler the params themselves. */
function paramsOf(request: McpRequest, named: string | undefined): McpParams | undefined {
  return named === undefined || "method" in request ? request.params : (request as McpParams);
}

/** The signal and id a handler's context carries, in either SDK line's shape. */
function handlerLinks(extra: HandlerExtra): { signal: AbortSignal; requestId: string | number | undefined } {
  const signal = extra.signal ?? extra.mcpReq?.signal;
  if (signal === undefined) throw new TypeError("acp-cancel/mcp: a scoped handler was called without its request's signal");
  return { signal, requestId: extra.requestId ?? extra.mcpReq?.id };
}

/** What the observer is told of a handler's job, joined to the sender's trace by `params._meta` (SEP-414). */
function handlingInfo(method: string, params: McpParams | undefined, id: string | number | undefined): JobInfo {
  const tool = method === "tools/call" ? params?.name : undefined;
  return {
    protocol: "mcp", method, id, kind: "server",
    carrier: params?._meta,
    attributes: typeof tool === "string" ? { "gen_ai.tool.name": tool } : undefined,
  };
}
