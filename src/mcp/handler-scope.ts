import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { bindHandlerJob, type CancelReason, Job, jobObserver, settleJob } from "../core/index.js";
import type { McpEvent } from "./events.js";

/** What the scope needs of a handler's `extra`: the signal the SDK aborts (and the id, for traces). */
type HandlerExtra = Pick<RequestHandlerExtra<never, never>, "signal"> & Partial<Pick<RequestHandlerExtra<never, never>, "requestId">>;
type McpRequest = { method: string; params?: { name?: unknown; _meta?: Record<string, unknown> } };
type Handler = (request: McpRequest, extra: HandlerExtra) => unknown;

/** An MCP SDK `Server`, `Client` or `McpServer`: anything with (or holding) `setRequestHandler`. */
type HandlerRegistry = { setRequestHandler: (schema: never, handler: never) => void };
/** What the scope needs of a transport: the close callback the SDK chains to. */
type ClosingTransport = { onclose?: (() => void) | undefined };
/** The SDK `Protocol` the handlers are registered on, as far as the scope reads it. */
type ScopedProtocol = {
  setRequestHandler: (schema: unknown, handler: Handler) => void;
  connect?: (transport: ClosingTransport, ...rest: unknown[]) => Promise<void>;
  transport?: ClosingTransport | undefined;
};
export type McpHandlerHost = HandlerRegistry | { server: HandlerRegistry };

export interface McpHandlerScopeOptions {
  onEvent?: (event: McpEvent) => void;
}

export interface McpHandlerScope {
  /** Requests whose handler has not finished; zero at quiescence. */
  readonly inFlight: number;
}

/** Some SDK versions abort every handler with a ConnectionClosed McpError when the connection goes. */
const CONNECTION_CLOSED = -32000;

/** A request a handler of this process is answering (a class, so a visitor can tell it apart). */
export class McpHandling {
  constructor(readonly method: string) {}
}

/**
 * The cancel reason of a handler's aborted signal. MCP SDK 1.32 aborts handlers without a reason on close, like a
 * reasonless `notifications/cancelled`, so the transport's `onclose` is watched (the SDK calls it before aborting them).
 */
function watchConnection(target: ScopedProtocol): (signal: AbortSignal) => CancelReason {
  let closed = false;
  const watch = (transport: ClosingTransport) => {
    const previous = transport.onclose;
    transport.onclose = () => {
      closed = true;
      previous?.();
    };
  };
  if (target.transport !== undefined) watch(target.transport);
  const connect = target.connect?.bind(target);
  if (connect !== undefined) {
    target.connect = (transport, ...rest) => {
      closed = false;
      watch(transport);
      return connect(transport, ...rest);
    };
  }
  return (signal) => {
    const code = (signal.reason as { code?: unknown } | undefined)?.code;
    return closed || code === CONNECTION_CLOSED ? "shutdown" : "external";
  };
}

/**
 * Runs each request handler registered from now on (on an MCP SDK server or client; an `McpServer`'s
 * inner `server`) as a job: `jobOf(extra)` is its parent for any binding's call, and the SDK's abort of
 * `extra.signal` cancels its subtree (`external` for the peer's cancel, `shutdown` when the connection closes).
 */
export function scopeMcpHandlers(host: McpHandlerHost, options: McpHandlerScopeOptions = {}): McpHandlerScope {
  const target = ("server" in host ? host.server : host) as unknown as ScopedProtocol;
  const { onEvent } = options;
  const reasonOf = watchConnection(target);
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
        settleJob(job);
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
    protocol: "mcp", method: request.method, id: extra.requestId, kind: "server",
    carrier: request.params?._meta,
    attributes: typeof tool === "string" ? { "gen_ai.tool.name": tool } : undefined,
  });
}
