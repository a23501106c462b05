import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type Call, Calls, doomedBy } from "../core/call.js";
import { type AnyJob, JobCancelledError, jobObserver } from "../core/index.js";
import { reportErrors } from "../core/report-errors.js";
import type { McpEvent } from "./events.js";
import { McpCall, NEVER_CANCELLED } from "./mcp-call.js";

/** The SDK's request options, plus the two every acp-cancel binding takes. */
export type McpCallOptions = Omit<RequestOptions, "signal"> & {
  /** The call becomes a child of this job (of any binding): a cancel above reaches it. */
  parent?: AnyJob | undefined;
  /** For plain code: aborting it cancels the call. */
  signal?: AbortSignal | undefined;
};

export interface CancellableMcpClientOptions {
  /**
   * How long a cancelled call may keep its job open when the SDK does not stop waiting by
   * itself (`initialize`, which is never cancelled, or a `send` that ignores its signal). Default 2000 ms.
   */
  graceMs?: number;
  /** A name for this client's calls in events and traces (the server's name, say). */
  label?: string;
  onEvent?: (event: McpEvent) => void;
}

type CallToolParams = Parameters<Client["callTool"]>[0];
type CallToolResult = Awaited<ReturnType<Client["callTool"]>>;
type RequestArgs = Parameters<Client["request"]>;

/** The part of an MCP SDK `Client` this binding uses. */
export type McpClientLike = Pick<Client, "callTool" | "request" | "connect" | "close">;

export interface CancellableMcpClient<C extends McpClientLike = Client> {
  readonly client: C;
  /** Calls a tool as a child job: `callTool({ name, arguments }, { parent: jobOf(ctx) })`. */
  callTool(params: CallToolParams, options?: McpCallOptions): Promise<CallToolResult>;
  /** Any request, as the SDK's `client.request(request, resultSchema, options)`. */
  request<T>(request: RequestArgs[0], resultSchema: RequestArgs[1], options?: McpCallOptions): Promise<T>;
  /**
   * Connects (the `initialize` handshake) under a job. `initialize` is never cancelled: after a
   * cancel the call waits out the grace, then gives up and closes the client.
   */
  connect(transport: Transport, options?: McpCallOptions): Promise<void>;
  /**
   * The general form: runs `send` (any MCP SDK call given the options it should pass on) as
   * one request of `method` under a job. `traceMeta`, set while tracing (acp-cancel/otel), is
   * the call's W3C trace context for the request's `params._meta` (SEP-414 keys).
   */
  call<R>(
    method: string,
    send: (options: RequestOptions, traceMeta?: Record<string, unknown>) => Promise<R>,
    options?: McpCallOptions,
  ): Promise<R>;
  /** Calls whose job has not settled; zero at quiescence. */
  readonly inFlight: number;
}

const clock = performance;

type Outcome = "answered" | "failed" | "cancelled" | "gave-up";

/**
 * Makes the requests an MCP SDK client sends children of the job tree, on the core call
 * lifecycle. A cancel of the parent (an ACP prompt turn, say) aborts the signal the call gave
 * the SDK, and the SDK sends MCP's own `notifications/cancelled`, stops waiting and ignores the
 * late response: the binding re-implements none of that. It only never cancels `initialize`,
 * and maps a cancelled call's answer to the cancelled error.
 */
export function cancellableMcpClient<C extends McpClientLike>(
  client: C,
  options: CancellableMcpClientOptions = {},
): CancellableMcpClient<C> {
  const { label, onEvent } = options;
  const calls = new Calls<McpCall, unknown>(options.graceMs === undefined ? {} : { graceMs: options.graceMs });
  // A throwing listener must not break the lifecycle (a call never sent, a cancel cut short):
  // its error is reported as the core reports a hook's, and the call goes on.
  const emit =
    onEvent === undefined
      ? undefined
      : (event: McpEvent) => {
          try {
            onEvent(event);
          } catch (error) {
            reportErrors([error], `in the MCP onEvent listener (${event.type})`);
          }
        };

  function call<R>(
    method: string,
    send: (options: RequestOptions, traceMeta?: Record<string, unknown>) => Promise<R>,
    callOptions: McpCallOptions = {},
    tool?: string,
  ) {
    const { parent, signal, ...requestOptions } = callOptions;
    const links = { parent, signal };
    const doomed = doomedBy(links);
    // Nothing is sent under work that is already being cancelled.
    if (doomed !== undefined) return Promise.reject(new JobCancelledError(doomed));
    const cancellable = !NEVER_CANCELLED.has(method);
    let outcome: Outcome = "gave-up";
    const cancelledError = (c: Call<McpCall, unknown>) => new JobCancelledError(c.cause ?? "internal");
    const mcpCall = calls.start(new McpCall(method, label), links, {
      // The SDK reacts to the same abort for cancellable requests; the grace bounds the rest.
      sendCancel: (c) => emit?.({ type: "cancel", method, label, reason: c.cause ?? "internal", notified: cancellable, at: clock.now() }),
      graceEnded: (c) => c.reject(cancelledError(c)),
      cleanup: () => emit?.({ type: "settled", method, label, outcome, at: clock.now() }),
      describe: () => ({ protocol: "mcp", method, kind: "client", attributes: tool === undefined ? undefined : { "gen_ai.tool.name": tool } }),
    }) as Call<McpCall, unknown>;
    emit?.({ type: "sent", method, label, at: clock.now() });
    const sdkOptions: RequestOptions = cancellable ? { ...requestOptions, signal: mcpCall.job.signal } : requestOptions;
    let pending: Promise<R>;
    try {
      pending = jobObserver === undefined ? send(sdkOptions) : send(sdkOptions, traceMetaOf(mcpCall));
    } catch (error) {
      pending = Promise.reject(error);
    }
    // A late answer after giving up is dropped by the lifecycle (settled exactly once).
    pending.then(
      (value) => {
        outcome = mcpCall.job.reason === undefined ? "answered" : "cancelled";
        if (outcome === "answered") mcpCall.resolve(value);
        else mcpCall.reject(cancelledError(mcpCall));
      },
      (error: unknown) => {
        outcome = mcpCall.job.reason === undefined ? "failed" : "cancelled";
        mcpCall.reject(outcome === "failed" ? error : cancelledError(mcpCall));
      },
    );
    return mcpCall.promise as Promise<R>;
  }

  return {
    client,
    call,
    callTool: (params, callOptions) =>
      call(
        "tools/call",
        (sdkOptions, meta) => client.callTool(withMeta(params, meta), undefined, sdkOptions),
        callOptions,
        params.name,
      ),
    request: <T>(request: RequestArgs[0], resultSchema: RequestArgs[1], callOptions?: McpCallOptions) =>
      call(
        request.method,
        (sdkOptions, meta) => client.request({ ...request, params: withMeta(request.params, meta) }, resultSchema, sdkOptions),
        callOptions,
      ) as Promise<T>,
    connect: async (transport, callOptions) => {
      try {
        await call("initialize", (sdkOptions) => client.connect(transport, sdkOptions), callOptions);
      } catch (error) {
        // A handshake given up on leaves no half-open session behind.
        if (error instanceof JobCancelledError) void client.close().catch(() => {});
        throw error;
      }
    },
    get inFlight() {
      return calls.size;
    },
  };
}

/** The call's trace context as `_meta` keys, merged over none. */
function traceMetaOf(call: Call<McpCall, unknown>): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  jobObserver?.inject(call.job, meta);
  return meta;
}

/** `params` with the trace keys added to its `_meta`; the same object when there are none. */
function withMeta<P extends { _meta?: unknown } | undefined>(params: P, meta: Record<string, unknown> | undefined): P {
  if (meta === undefined || Object.keys(meta).length === 0) return params;
  const own = params?._meta;
  const merged = typeof own === "object" && own !== null ? { ...(own as Record<string, unknown>), ...meta } : meta;
  return { ...params, _meta: merged } as P;
}
