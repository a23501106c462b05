import { AsyncLocalStorage } from "node:async_hooks";
import type { Readable, Writable } from "node:stream";
import {
  CancellationStrategy,
  CancellationToken,
  CancellationTokenSource,
  type ConnectionOptions,
  createMessageConnection,
  type Logger,
  type MessageConnection,
  ResponseError,
} from "vscode-jsonrpc/node";
import { type Call, type CallLinks, Calls, doomedBy } from "../core/call.js";
import type { AnyJob, CancelReason, Job } from "../core/index.js";
import { PERMISSION_CANCELLED, sessionIdOf } from "../wire/acp-shapes.js";
import { cancelledErrorData, ErrorCode } from "../wire/index.js";
import { ACP_CANCEL_METHOD, NdjsonMessageReader, NdjsonMessageWriter } from "./ndjson-messages.js";

export interface AcpMessageConnectionOptions {
  /** How long a cancelled request may go unanswered before it is settled with -32800. Default: core's `DEFAULT_GRACE_MS`. */
  graceMs?: number;
  /** Deadlines per method, in ms, for requests in either direction. */
  deadlines?: Readonly<Record<string, number>>;
  maxLineBytes?: number;
  logger?: Logger;
  /** Passed through to vscode-jsonrpc (its cancellation and connection strategies are ours). */
  maxParallelism?: number;
}

export interface AcpMessageConnection extends MessageConnection {
  /** Requests in flight: sent and not yet settled, received and not yet answered. */
  readonly inFlight: { readonly outgoing: number; readonly incoming: number };
}

/** What the binding keeps per request, in either direction (`sessionId`: of the request's params). */
type Work = { readonly method: string; readonly sessionId?: string | undefined };

type WorkCall = Call<Work, unknown>;

/** Which incoming request's handler is running: requests it sends nest under it. */
const handlerScope = new AsyncLocalStorage<Job<Work>>();

/** The job of the request whose handler is running (undefined outside one): the `parent` for another binding's call. */
export function currentJob(): AnyJob | undefined {
  return handlerScope.getStore();
}

function cancelledError(reason: CancelReason, detail?: string, original?: { code: number; message: string }) {
  const message = detail === undefined ? "Request cancelled" : `Request cancelled: ${detail}`;
  return new ResponseError(ErrorCode.RequestCancelled, message, cancelledErrorData(reason, detail, original));
}

/** A handler's error after it was cancelled, answered as a cancellation. */
function asCancelled(error: unknown, reason: CancelReason): ResponseError<unknown> {
  if (error instanceof ResponseError && error.code === ErrorCode.RequestCancelled) return error;
  const { code, message } = error instanceof ResponseError ? error : { code: ErrorCode.InternalError, message: String(error) };
  return cancelledError(reason, undefined, { code, message });
}

function methodOf(type: unknown): string {
  return typeof type === "string" ? type : (type as { method: string }).method;
}

/**
 * A vscode-jsonrpc `MessageConnection` that speaks ACP: ndjson framing, `$/cancel_request` both ways,
 * -32800 for cancelled work (before dispatch too), cascade to the requests a cancelled handler sent,
 * deadlines, grace, and prompt rejection on close; both directions on the core call lifecycle.
 */
export function createAcpMessageConnection(
  input: Readable,
  output: Writable,
  options: AcpMessageConnectionOptions = {},
): AcpMessageConnection {
  const deadlines = new Map(Object.entries(options.deadlines ?? {}));
  const outgoing = new Calls<Work, unknown>(options);
  const incoming = new Calls<Work, unknown>(options);
  let closed = false;
  const connectionOptions: ConnectionOptions = {
    cancellationStrategy: {
      receiver: CancellationStrategy.Message.receiver,
      sender: {
        sendCancellation: async (conn, id) => {
          try {
            await conn.sendNotification(ACP_CANCEL_METHOD, { requestId: id });
          } catch {
            // The connection is closing (vscode-jsonrpc throws at once then); the request is settled by the close path.
          }
        },
        cleanup() {},
      },
    },
    connectionStrategy: {
      // A request cancelled while still queued is answered without running its handler.
      cancelUndispatched: (message) => ({
        jsonrpc: "2.0",
        id: (message as unknown as { id: number | string }).id,
        error: cancelledError("external", "cancelled before dispatch").toJson(),
      }),
    },
  };
  if (options.maxParallelism !== undefined) connectionOptions.maxParallelism = options.maxParallelism;
  const reader = new NdjsonMessageReader(input, options);
  const connection = createMessageConnection(reader, new NdjsonMessageWriter(output), options.logger, connectionOptions);
  const giveUp = (call: WorkCall) => call.reject(cancelledError(call.job.reason ?? "internal", `no answer within ${outgoing.graceMs} ms`));
  /** Either direction's call: `token` (the peer's or the user's) cancels it; its cancel runs `sendCancel`. */
  const start = (
    calls: Calls<Work, unknown>,
    work: Work,
    links: CallLinks,
    source: CancellationTokenSource,
    token: CancellationToken | undefined,
    sendCancel: () => void,
  ): WorkCall => {
    const cleanup = () => {
      listener?.dispose();
      source.dispose();
    };
    // The peer (or the handler) ignored the cancel: the grace answers for it.
    const call = calls.start(work, links, { sendCancel, graceEnded: giveUp, cleanup }) as WorkCall;
    // Read by the cleanup only, which runs once the call settles: after this line.
    const listener = token?.onCancellationRequested(() => call.cancel("external"));
    return call;
  };
  const settleFrom = (call: WorkCall, pending: Promise<unknown>) =>
    pending.then(
      (value) => call.resolve(value),
      (error: unknown) => call.reject(call.job.reason === undefined ? error : asCancelled(error, call.job.reason)),
    );

  const sendRequest = (type: unknown, ...args: unknown[]): Promise<unknown> => {
    const method = methodOf(type);
    const userToken = CancellationToken.is(args.at(-1)) ? (args.pop() as CancellationToken) : undefined;
    const parent = handlerScope.getStore();
    const links = { parent: parent?.isSettled === false ? parent : undefined, timeoutMs: deadlines.get(method) };
    const doomed = doomedBy(links);
    if (doomed !== undefined) {
      return Promise.reject(cancelledError(doomed, "issued under a request that was already being cancelled"));
    }
    const source = new CancellationTokenSource();
    // vscode-jsonrpc sends $/cancel_request through our strategy (not once the connection is gone).
    const call = start(outgoing, { method }, links, source, userToken, () => {
      if (!closed) source.cancel();
    });
    void settleFrom(call, (connection.sendRequest as (...a: unknown[]) => Promise<unknown>)(type, ...args, source.token));
    if (userToken?.isCancellationRequested === true) call.cancel("external");
    return call.promise;
  };

  const scoped = (handler: (...args: unknown[]) => unknown, methodOfArgs: (args: unknown[]) => string) =>
    (...args: unknown[]): Promise<unknown> => {
      const theirs = args.at(-1) as CancellationToken;
      const ours = new CancellationTokenSource();
      const method = methodOfArgs(args);
      const work: Work = { method, sessionId: args.length > 1 ? sessionIdOf(args[args.length - 2]) : undefined };
      const call = start(incoming, work, { timeoutMs: deadlines.get(method) }, ours, theirs, () => ours.cancel());
      args[args.length - 1] = ours.token;
      void settleFrom(call, handlerScope.run(call.job, async () => handler(...args)));
      return call.promise;
    };

  const onRequest = (type: unknown, handler?: unknown): unknown => {
    const register = connection.onRequest as (...a: unknown[]) => unknown;
    if (typeof type === "function") return register(scoped(type as (...args: unknown[]) => unknown, (args) => String(args[0])));
    const method = methodOf(type);
    return register(type, scoped(handler as (...args: unknown[]) => unknown, () => method));
  };

  // ACP: after its own session/cancel, the client MUST answer that session's pending permission requests
  // as cancelled. Their handlers' tokens fire too; the answer does not wait for them (a dialog may ignore its token).
  const sendNotification = (type: unknown, ...args: unknown[]): Promise<void> => {
    const sent = (connection.sendNotification as (...a: unknown[]) => Promise<void>)(type, ...args);
    const sessionId = methodOf(type) === "session/cancel" ? sessionIdOf(args[0]) : undefined;
    if (sessionId !== undefined) {
      for (const call of [...incoming.values()]) {
        const work = call.payload;
        if (work.method !== "session/request_permission" || work.sessionId !== sessionId || !call.job.isRunning) continue;
        call.cancel("session");
        call.resolve(PERMISSION_CANCELLED);
      }
    }
    return sent;
  };

  // Stock vscode-jsonrpc leaves pending requests hanging until dispose(); answer them now.
  connection.onClose(() => {
    closed = true;
    incoming.cancelAll("shutdown");
    for (const call of [...outgoing.values()]) {
      call.cancel("shutdown");
      call.reject(cancelledError("shutdown", "the connection closed"));
    }
  });

  // vscode-jsonrpc's connection is a plain object of closures: a copy with three members of ours decorates it.
  return {
    ...connection,
    sendRequest: sendRequest as MessageConnection["sendRequest"],
    onRequest: onRequest as MessageConnection["onRequest"],
    sendNotification: sendNotification as MessageConnection["sendNotification"],
    get inFlight() {
      return { outgoing: outgoing.size, incoming: incoming.size };
    },
  };
}
