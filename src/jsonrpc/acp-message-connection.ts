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
import { type AnyJob, type CancelReason, GraceTimers, Job } from "../core/index.js";
import { cancelledErrorData, ErrorCode } from "../wire/index.js";
import { ACP_CANCEL_METHOD } from "./cancel-methods.js";
import { NdjsonMessageReader } from "./ndjson-message-reader.js";
import { NdjsonMessageWriter } from "./ndjson-message-writer.js";

export interface AcpMessageConnectionOptions {
  /** How long a cancelled request may go unanswered before it is settled with -32800. Default 2000 ms. */
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

/** Marks this binding's payloads: a subtree can also hold other bindings' jobs. */
const WORK = Symbol("acp-cancel.jsonrpc.work");

/** What the binding keeps per job; `stop` cancels the work in vscode-jsonrpc's terms. */
interface Work {
  readonly [WORK]: true;
  readonly method: string;
  /** The `sessionId` of the request's params, when it has one. */
  readonly sessionId?: string | undefined;
  /** An incoming request only: answer it now with `result`, whatever its handler does. */
  answerWith?: (result: unknown) => void;
  /** Cancel the work in vscode-jsonrpc's terms, and start its grace period. */
  stop(): void;
  /** The grace period ended without an answer. */
  expire(): void;
  /** The connection closed: settle now, nobody will answer. */
  abandon(): void;
}

const DEFAULT_GRACE_MS = 2000;
const SESSION_CANCEL = "session/cancel";
const REQUEST_PERMISSION = "session/request_permission";
/** The result ACP requires for a permission request pending when its session is cancelled. */
const CANCELLED_PERMISSION = { outcome: { outcome: "cancelled" } } as const;

function sessionIdOf(params: unknown): string | undefined {
  const sessionId = (params as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof sessionId === "string" ? sessionId : undefined;
}
/** Which incoming request's handler is running: requests it sends nest under it. */
const handlerScope = new AsyncLocalStorage<Job<Work>>();

function isWorkJob(job: AnyJob): job is Job<Work> {
  return (job.payload as Partial<Work> | undefined)?.[WORK] === true;
}

/**
 * The job of the request whose handler is running (undefined outside one), to pass on as
 * `parent` to another binding's call: a cancel of the request then reaches that call.
 */
export function currentJob(): AnyJob | undefined {
  return handlerScope.getStore();
}

function cancelledError(reason: CancelReason, detail?: string, original?: { code: number; message: string }) {
  const message = detail === undefined ? "Request cancelled" : `Request cancelled: ${detail}`;
  return new ResponseError(ErrorCode.RequestCancelled, message, cancelledErrorData(reason, detail, original));
}

/** A handler's error after it was cancelled, answered as a cancellation. */
function asCancelled(error: unknown, reason: CancelReason): ResponseError<unknown> {
  if (error instanceof ResponseError) {
    if (error.code === ErrorCode.RequestCancelled) return error;
    return cancelledError(reason, undefined, { code: error.code, message: error.message });
  }
  return cancelledError(reason, undefined, { code: ErrorCode.InternalError, message: String(error) });
}

/**
 * A vscode-jsonrpc `MessageConnection` that speaks ACP: ndjson framing, `$/cancel_request`
 * both ways, -32800 for cancelled work (before dispatch too), cascade from a cancelled
 * handler to the requests it sent, deadlines, grace, and prompt rejection on close.
 */
export function createAcpMessageConnection(
  input: Readable,
  output: Writable,
  options: AcpMessageConnectionOptions = {},
): AcpMessageConnection {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const deadlines = new Map(Object.entries(options.deadlines ?? {}));
  const outgoing = new Set<Job<Work>>();
  const incoming = new Set<Job<Work>>();
  const connectionOptions: ConnectionOptions = {
    cancellationStrategy: {
      receiver: CancellationStrategy.Message.receiver,
      sender: {
        sendCancellation: async (conn, id) => {
          try {
            await conn.sendNotification(ACP_CANCEL_METHOD, { requestId: id });
          } catch {
            // The connection is closing; the request is settled by the close path.
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
  const reader = new NdjsonMessageReader(
    input,
    options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes },
  );
  const connection = createMessageConnection(
    reader,
    new NdjsonMessageWriter(output),
    options.logger,
    connectionOptions,
  );

  const cancelTree = (job: Job<Work>, reason: CancelReason) => job.cancel(reason, (each) => {
    // Other bindings' jobs in the subtree are stopped through their own signals.
    if (isWorkJob(each)) each.payload.stop();
  });
  // One timer for every grace period in flight, whichever direction.
  const grace = new GraceTimers<Job<Work>>(graceMs, (job) => job.payload.expire());
  const noAnswer = (job: Job<Work>) => cancelledError(job.reason ?? "internal", `no answer within ${graceMs} ms`);

  const sendRequest = connection.sendRequest.bind(connection) as (...args: unknown[]) => Promise<unknown>;
  (connection as unknown as Record<string, unknown>).sendRequest = (type: unknown, ...args: unknown[]) => {
    const method = typeof type === "string" ? type : (type as { method: string }).method;
    const userToken = CancellationToken.is(args.at(-1)) ? (args.pop() as CancellationToken) : undefined;
    const parent = handlerScope.getStore();
    if (parent?.isDoomed) {
      const detail = "issued under a request that was already being cancelled";
      return Promise.reject(cancelledError(parent.reason ?? "internal", detail));
    }
    const source = new CancellationTokenSource();
    let settle!: (outcome: { value: unknown } | { error: unknown }) => void;
    const job: Job<Work> = new Job<Work>(
      {
        [WORK]: true,
        method,
        stop() {
          source.cancel(); // vscode-jsonrpc sends $/cancel_request through our strategy
          grace.start(job);
        },
        expire: () => settle({ error: noAnswer(job) }),
        abandon: () => settle({ error: cancelledError("shutdown", "the connection closed") }),
      },
      parent?.isSettled === false ? parent : undefined,
    );
    outgoing.add(job);
    const listener = userToken?.onCancellationRequested(() => cancelTree(job, "external"));
    const deadline = deadlines.get(method);
    if (deadline !== undefined) job.setDeadline(deadline, (expired) => cancelTree(expired, "deadline"));
    return new Promise((resolve, reject) => {
      settle = (outcome) => {
        if (!job.settle()) return; // exactly once: a late reply after grace is dropped here
        grace.stop(job);
        outgoing.delete(job);
        listener?.dispose();
        source.dispose();
        if ("value" in outcome) resolve(outcome.value);
        else reject(job.reason === undefined ? outcome.error : asCancelled(outcome.error, job.reason));
      };
      sendRequest(type, ...args, source.token).then(
        (value) => settle({ value }),
        (error: unknown) => settle({ error }),
      );
      if (job.reason === undefined && userToken?.isCancellationRequested) cancelTree(job, "external");
    });
  };

  const onRequest = connection.onRequest.bind(connection) as (...args: unknown[]) => unknown;
  const scoped = (handler: (...args: unknown[]) => unknown, methodOf: (args: unknown[]) => string) => {
    return (...args: unknown[]) => {
      const theirs = args.at(-1) as CancellationToken;
      const ours = new CancellationTokenSource();
      let giveUp!: (error: unknown) => void;
      let answerNow!: (result: unknown) => void;
      // Settles before the handler does when the grace ends or the answer is already known.
      const decided = new Promise<unknown>((resolve, reject) => {
        giveUp = reject;
        answerNow = resolve;
      });
      decided.catch(() => {});
      const method = methodOf(args);
      const job: Job<Work> = new Job<Work>({
        [WORK]: true,
        method,
        sessionId: args.length > 1 ? sessionIdOf(args[args.length - 2]) : undefined,
        stop() {
          ours.cancel();
          grace.start(job);
        },
        expire: () => giveUp(noAnswer(job)), // the handler ignored its token: answer for it
        abandon: () => ours.cancel(),
        answerWith: answerNow,
      });
      incoming.add(job);
      const listener = theirs.onCancellationRequested(() => cancelTree(job, "external"));
      const deadline = deadlines.get(job.payload.method);
      if (deadline !== undefined) job.setDeadline(deadline, (expired) => cancelTree(expired, "deadline"));
      args[args.length - 1] = ours.token;
      const run = handlerScope.run(job, async () => {
        try {
          return await handler(...args);
        } catch (error) {
          throw job.reason === undefined ? error : asCancelled(error, job.reason);
        }
      });
      return Promise.race([run, decided]).finally(() => {
        grace.stop(job);
        job.settle();
        incoming.delete(job);
        listener.dispose();
        ours.dispose();
      });
    };
  };
  (connection as unknown as Record<string, unknown>).onRequest = (type: unknown, handler?: unknown) => {
    if (typeof type === "function") {
      return onRequest(scoped(type as (...args: unknown[]) => unknown, (args) => String(args[0])));
    }
    const method = typeof type === "string" ? type : (type as { method: string }).method;
    return onRequest(
      type,
      scoped(handler as (...args: unknown[]) => unknown, () => method),
    );
  };

  // ACP: after the client's own session/cancel, it MUST answer that session's pending permission
  // requests with the cancelled outcome. Their handlers' tokens fire too, but the answer does
  // not wait for them (a dialog may ignore its token).
  const sendNotification = connection.sendNotification.bind(connection) as (...args: unknown[]) => Promise<void>;
  (connection as unknown as Record<string, unknown>).sendNotification = (type: unknown, ...args: unknown[]) => {
    const method = typeof type === "string" ? type : (type as { method: string }).method;
    const sent = sendNotification(type, ...args);
    const sessionId = method === SESSION_CANCEL ? sessionIdOf(args[0]) : undefined;
    if (sessionId !== undefined) {
      for (const job of [...incoming]) {
        const work = job.payload;
        if (work.method !== REQUEST_PERMISSION || work.sessionId !== sessionId || !job.isRunning) continue;
        cancelTree(job, "session");
        work.answerWith?.(CANCELLED_PERMISSION);
      }
    }
    return sent;
  };

  // Stock vscode-jsonrpc leaves pending requests hanging until dispose(); answer them now.
  connection.onClose(() => {
    for (const job of [...incoming]) job.cancel("shutdown", (each) => {
      if (isWorkJob(each)) each.payload.abandon();
    });
    for (const job of [...outgoing]) {
      job.cancel("shutdown");
      job.payload.abandon();
    }
  });

  // defineProperty, not Object.assign: assign would copy the getter's value once.
  return Object.defineProperty(connection, "inFlight", {
    get: () => ({ outgoing: outgoing.size, incoming: incoming.size }),
  }) as AcpMessageConnection;
}
