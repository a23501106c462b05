import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type AnyJob, type CancelReason, GraceTimers, Job, JobCancelledError } from "../core/index.js";
import type { McpEvent } from "./events.js";
import { DEFAULT_GRACE_MS, McpCall, NEVER_CANCELLED } from "./mcp-call.js";

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
   * one request of `method` under a job.
   */
  call<R>(method: string, send: (options: RequestOptions) => Promise<R>, options?: McpCallOptions): Promise<R>;
  /** Calls whose job has not settled; zero at quiescence. */
  readonly inFlight: number;
}

const clock = performance;

/** Why work under `job` is pointless: the reason of the nearest ancestor being cancelled. */
function doomedBy(job: AnyJob): CancelReason {
  for (let at: AnyJob | undefined = job; at !== undefined; at = at.parent) {
    if (at.reason !== undefined) return at.reason;
  }
  return "internal";
}

/**
 * Makes the requests an MCP SDK client sends children of the job tree. A cancel of the parent
 * (an ACP prompt turn, say) aborts the signal the call gave the SDK, and the SDK sends MCP's
 * own `notifications/cancelled`, stops waiting and ignores the late response: the binding
 * re-implements none of that. It only links the call's job into the tree, never cancels
 * `initialize`, and bounds every wait after a cancel by the grace.
 */
export function cancellableMcpClient<C extends McpClientLike>(
  client: C,
  options: CancellableMcpClientOptions = {},
): CancellableMcpClient<C> {
  const { label, onEvent } = options;
  const inFlight = new Set<Job<McpCall>>();
  const giveUps = new Map<Job<McpCall>, () => void>();
  const grace = new GraceTimers<Job<McpCall>>(options.graceMs ?? DEFAULT_GRACE_MS, (job) => giveUps.get(job)?.());
  const emit = onEvent === undefined ? undefined : (event: McpEvent) => onEvent(event);

  function call<R>(method: string, send: (options: RequestOptions) => Promise<R>, callOptions: McpCallOptions = {}) {
    const { parent, signal, ...requestOptions } = callOptions;
    if (parent?.isDoomed === true || signal?.aborted === true) {
      // Nothing is sent under work that is already being cancelled.
      const reason = parent?.isDoomed === true ? doomedBy(parent) : "external";
      return Promise.reject(new JobCancelledError(reason));
    }
    const job = new Job(new McpCall(method, label), parent);
    const cancellable = !NEVER_CANCELLED.has(method);
    const jobSignal = job.signal; // created now, so a cancel of the tree aborts it
    inFlight.add(job);
    emit?.({ type: "sent", method, label, at: clock.now() });

    return new Promise<R>((resolve, reject) => {
      const onUserAbort = () => job.cancel("external");
      signal?.addEventListener("abort", onUserAbort, { once: true });
      const finish = (outcome: "answered" | "failed" | "cancelled" | "gave-up", settleWith: () => void) => {
        if (!job.settle()) return; // exactly once: a late answer after giving up is dropped here
        inFlight.delete(job);
        giveUps.delete(job);
        grace.stop(job);
        jobSignal.removeEventListener("abort", onCancel);
        signal?.removeEventListener("abort", onUserAbort);
        emit?.({ type: "settled", method, label, outcome, at: clock.now() });
        settleWith();
      };
      const cancelledError = () => jobSignal.reason as JobCancelledError;
      const onCancel = () => {
        emit?.({ type: "cancel", method, label, reason: job.reason ?? "internal", notified: cancellable, at: clock.now() });
        // The SDK reacts to the same abort for cancellable requests; the grace bounds the rest.
        giveUps.set(job, () => finish("gave-up", () => reject(cancelledError())));
        grace.start(job);
      };
      jobSignal.addEventListener("abort", onCancel, { once: true });
      const sdkOptions: RequestOptions = cancellable ? { ...requestOptions, signal: jobSignal } : requestOptions;
      let pending: Promise<R>;
      try {
        pending = send(sdkOptions);
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (value) => finish(job.reason === undefined ? "answered" : "cancelled", () => {
          if (job.reason === undefined) resolve(value);
          else reject(cancelledError());
        }),
        (error: unknown) => finish(job.reason === undefined ? "failed" : "cancelled", () => {
          reject(job.reason === undefined ? error : cancelledError());
        }),
      );
    });
  }

  return {
    client,
    call,
    callTool: (params, callOptions) =>
      call("tools/call", (sdkOptions) => client.callTool(params, undefined, sdkOptions), callOptions),
    request: <T>(request: RequestArgs[0], resultSchema: RequestArgs[1], callOptions?: McpCallOptions) =>
      call(request.method, (sdkOptions) => client.request(request, resultSchema, sdkOptions), callOptions) as Promise<T>,
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
      return inFlight.size;
    },
  };
}
