import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type Call, type CallLinks, Calls, doomedBy } from "../core/call.js";
import { JobCancelledError, traceCarrier } from "../core/index.js";
import { guarded, reportErrors } from "../core/report-errors.js";
import type { McpEvent, McpOutcome } from "./events.js";
import { type McpRequester, TaskFollower } from "./task-follow.js";
import { readTaskAnswer } from "./task-shapes.js";

/**
 * The SDK's request options, plus the two links every acp-cancel binding takes (`parent`, `signal`). With `task`
 * (`{ ttl? }`), `callTool` asks for a task (MCP 2025-11-25) and follows it: a cancel then sends `tasks/cancel`.
 */
export type McpCallOptions = Omit<RequestOptions, "signal" | "task">
  & Pick<CallLinks, "parent" | "signal"> & { task?: { ttl?: number } | undefined };

export interface CancellableMcpClientOptions {
  /** How long a cancelled call's job stays open when the SDK does not stop waiting (`initialize`). Default 2000 ms. */
  graceMs?: number;
  /** A name for this client's calls in events and traces (the server's name, say). */
  label?: string;
  onEvent?: (event: McpEvent) => void;
}

type CallToolParams = Parameters<Client["callTool"]>[0];
type CallToolResult = Awaited<ReturnType<Client["callTool"]>>;
type RequestArgs = Parameters<Client["request"]>;
/** An SDK call given the options to pass on and, while tracing, the W3C trace context for `params._meta` (SEP-414). */
type McpSend<R> = (options: RequestOptions, traceMeta?: Record<string, unknown>) => Promise<R>;

/** The part of an MCP SDK `Client` this binding uses (1.x; a 2.x `Client`, told by `getProtocolEra`, fits too). */
export type McpClientLike = Pick<Client, "callTool" | "request" | "connect" | "close">;

export interface CancellableMcpClient<C extends McpClientLike = Client> {
  readonly client: C;
  /** Calls a tool as a child job: `callTool({ name, arguments }, { parent: jobOf(ctx) })`. */
  callTool(params: CallToolParams, options?: McpCallOptions): Promise<CallToolResult>;
  /** Any request, as the SDK's `client.request(request, resultSchema, options)`. */
  request<T>(request: RequestArgs[0], resultSchema: RequestArgs[1], options?: McpCallOptions): Promise<T>;
  /** Connects under a job. `initialize` is never cancelled: after a cancel it waits out the grace, then closes the client. */
  connect(transport: Transport, options?: McpCallOptions): Promise<void>;
  /** The general form: runs `send` as one request of `method` under a job. */
  call<R>(method: string, send: McpSend<R>, options?: McpCallOptions): Promise<R>;
  /** Calls whose job has not settled; zero at quiescence. */
  readonly inFlight: number;
}

/** What the binding keeps per request in flight; `label` names the peer. */
type McpCall = { readonly method: string; readonly label: string | undefined };

/**
 * Makes an MCP SDK client's requests children of the job tree, on the core call lifecycle. A cancel
 * aborts the signal given to the SDK, which sends MCP's `notifications/cancelled` and drops the late
 * response itself; this binding only never cancels `initialize`, and maps a cancelled answer to the error.
 */
export function cancellableMcpClient<C extends McpClientLike>(
  client: C,
  options: CancellableMcpClientOptions = {},
): CancellableMcpClient<C> {
  const { label, onEvent } = options;
  const calls = new Calls<McpCall, unknown>(options);
  // A throwing listener must not break the lifecycle: its error is reported as the core reports a hook's.
  const emit = onEvent && ((event: McpEvent) => {
    const errors: unknown[] = [];
    guarded(() => onEvent(event), errors);
    reportErrors(errors, `in the MCP onEvent listener (${event.type})`);
  });

  // The SDK lines differ in `callTool`'s arguments: 1.x (params, resultSchema, options), 2.x (params, options).
  const secondLine = typeof (client as { getProtocolEra?: unknown }).getProtocolEra === "function";
  const requester: McpRequester = (method, params, requestOptions) =>
    (client.request as (r: unknown, s: unknown, o: unknown) => Promise<unknown>)({ method, params }, ANY_RESULT, requestOptions);

  function call<R>(method: string, send: McpSend<R>, callOptions: McpCallOptions = {}, tool?: string) {
    const { parent, signal, task, ...requestOptions } = callOptions;
    const links = { parent, signal };
    // Nothing is sent under work that is already being cancelled.
    const doomed = doomedBy(links);
    if (doomed !== undefined) return Promise.reject(new JobCancelledError(doomed));
    // MCP forbids cancelling `initialize`: the client waits for it, or gives up and closes.
    const cancellable = method !== "initialize";
    let outcome: McpOutcome = "gave-up";
    const cancelledError = (c: Call<McpCall, unknown>) => new JobCancelledError(c.cause ?? "internal");
    // Set once the server answered with a task: from then on a cancel is `tasks/cancel(taskId)`.
    let follower: TaskFollower | undefined;
    // A task-augmented request is not cancelled with notifications/cancelled (the spec wants tasks/cancel): a cancel
    // waits for its answer, the task handle, within the grace; only the grace's end stops waiting.
    const taskRequest = task === undefined ? undefined : new AbortController();
    const mcpCall = calls.start({ method, label }, links, {
      // The SDK reacts to the same abort for cancellable requests; the grace bounds the rest.
      sendCancel: (c) => {
        const notified = cancellable && (task === undefined || follower !== undefined);
        emit?.({ type: "cancel", method, label, reason: c.cause ?? "internal", notified, at: performance.now() });
        follower?.cancel();
      },
      graceEnded: (c) => {
        follower?.graceEnded();
        taskRequest?.abort();
        c.reject(cancelledError(c));
      },
      cleanup: () => emit?.({ type: "settled", method, label, outcome, at: performance.now() }),
      describe: () => ({ protocol: "mcp", method, kind: "client", attributes: tool === undefined ? undefined : { "gen_ai.tool.name": tool } }),
    }) as Call<McpCall, unknown>;
    emit?.({ type: "sent", method, label, at: performance.now() });
    const sdkOptions: RequestOptions = cancellable
      ? { ...requestOptions, signal: taskRequest?.signal ?? mcpCall.job.signal }
      : requestOptions;
    // An answer after a cancel is the cancel's: the SDK rejects, or a late result slipped through.
    const settle = (answered: McpOutcome, answer: () => void) => {
      outcome = mcpCall.job.reason === undefined ? answered : "cancelled";
      if (outcome === "cancelled") mcpCall.reject(cancelledError(mcpCall));
      else answer();
    };
    const followTask = (value: unknown) => {
      const answer = readTaskAnswer(value);
      if (answer.kind === "result") return settle("answered", () => mcpCall.resolve(value));
      if (answer.kind === "bad") {
        emit?.({ type: "bad-task", method, label, problem: answer.problem, at: performance.now() });
        return settle("failed", () => mcpCall.reject(new Error(`MCP ${method}: ${answer.problem}`)));
      }
      emit?.({ type: "task", method, label, taskId: answer.taskId, at: performance.now() });
      // The grace ended before the handle came: the task is cancelled all the same, nothing waits for it.
      if (mcpCall.settled) return void requester("tasks/cancel", { taskId: answer.taskId }, {}).catch(() => {});
      follower = new TaskFollower({
        call: mcpCall as Call<unknown, unknown>, taskId: answer.taskId, request: requester, label,
        resultTimeout: requestOptions.timeout, graceMs: calls.graceMs, emit,
        outcome: (ended) => (outcome = ended),
      });
      // Cancelled while the request was in flight: the task exists now, so it is cancelled as a task.
      if (mcpCall.job.reason === undefined) follower.start();
      else follower.cancel();
    };
    // The executor runs `send` now; its synchronous throw rejects like an asynchronous one.
    new Promise<R>((resolve) => resolve(send(sdkOptions, traceCarrier(mcpCall.job)))).then(
      (value) => (task === undefined ? settle("answered", () => mcpCall.resolve(value)) : followTask(value)),
      (error: unknown) => settle("failed", () => mcpCall.reject(error)),
    );
    return mcpCall.promise as Promise<R>;
  }

  return {
    client,
    call,
    callTool: (params, callOptions) =>
      call(
        "tools/call",
        (sdkOptions, meta) => {
          const task = callOptions?.task;
          // A task-augmented call: `params.task`, and the answer read by hand (a task, or a plain result).
          if (task !== undefined) {
            return requester("tools/call", { ...withMeta(params, meta), task }, sdkOptions) as Promise<CallToolResult>;
          }
          if (secondLine) return (client.callTool as SecondLineCallTool)(withMeta(params, meta), sdkOptions);
          return client.callTool(withMeta(params, meta), undefined, sdkOptions);
        },
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

/**
 * A result schema that accepts any answer, in the two forms the SDK lines take: `safeParse` (1.x, as a
 * zod 3 schema) and Standard Schema (2.x). The task calls check the answers themselves (task-shapes.ts).
 */
const ANY_RESULT = {
  "safeParse": (data: unknown) => ({ success: true as const, data }),
  "~standard": { version: 1 as const, vendor: "acp-cancel", validate: (value: unknown) => ({ value }) },
};

/** `callTool` of a 2.x `Client`: (params, options). */
type SecondLineCallTool = (params: unknown, options: unknown) => Promise<CallToolResult>;

/** `params` with the trace keys added to its `_meta`; the same object when there are none. */
function withMeta<P extends { _meta?: unknown } | undefined>(params: P, meta: Record<string, unknown> | undefined): P {
  if (meta === undefined) return params;
  const own = params?._meta;
  const merged = typeof own === "object" && own !== null ? { ...(own as Record<string, unknown>), ...meta } : meta;
  return { ...params, _meta: merged } as P;
}
