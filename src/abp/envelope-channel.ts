/**
 * The agent side of an envelope channel: requests under fresh envelope ids, each `-result` matched by that id and
 * validated, whatever is pending rejected when the channel goes away. Its carriers (postMessage, WebSocket,
 * Playwright) supply `send` and feed `receive` (or `answer` / `reject`) and `fail`.
 */
import {
  type CallRequest,
  type CancelRequest,
  type Envelope,
  type InitializeParams,
  LIMITS,
  MESSAGE_TYPES,
  type MessageType,
  messageSize,
  messageValue,
  NOT_JSON,
  RESULT_TYPE,
  type RequestType,
  type ShutdownPayload,
} from "./app/protocol.js";
import { errorMessage } from "../core/error-message.js";
import { firstIssue } from "../wire/first-issue.js";
import { checkEnvelope } from "./app/validate.js";
import {
  type CallResult,
  type CancelResult,
  type InitializeResult,
  isPlainCallResult,
  type NotificationPayload,
  NotificationSchema,
  type ProgressPayload,
  ProgressSchema,
  RESULT_SCHEMAS,
} from "./schemas.js";

/** The channel to the app is gone: the page closed or navigated, the socket closed, the client closed. */
export class AbpClosedError extends Error {
  override readonly name = "AbpClosedError";
}

/** The app sent something this side cannot accept, or refused what this side sent. */
export class AbpProtocolError extends Error {
  override readonly name = "AbpProtocolError";
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** One way of reaching an app: each request settles once; when it goes away, each pending one rejects with an AbpClosedError. */
export type AbpTransport = Pick<EnvelopeChannel, "closedWith" | "request" | "shutdown" | "close">;

export interface EnvelopeChannelOptions {
  maxMessageBytes?: number;
  /** Told of input that was refused and of notifications nobody waits for; the channel carries on. */
  onError?: (error: AbpProtocolError) => void;
  onNotification?: (payload: NotificationPayload) => void;
}

/** Each request type's payload and answer. */
interface Exchange {
  "initialize": [InitializeParams, InitializeResult];
  "capabilities/call": [CallRequest, CallResult];
  "capabilities/cancel": [CancelRequest, CancelResult];
}

interface Pending {
  type: RequestType;
  resolve(payload: unknown): void;
  reject(error: unknown): void;
  progressToken?: string | number;
  /** Stops listening to the request's signal. */
  unlink?: () => void;
}

let channels = 0;

export class EnvelopeChannel {
  private readonly pending = new Map<string, Pending>();
  private readonly progress = new Map<string | number, (progress: ProgressPayload) => void>();
  private readonly prefix = `c${++channels}-`;
  private nextId = 0;
  private gone: AbpClosedError | undefined = undefined;

  /** `send` may return a promise for a one-way message (`shutdown` awaits it); `peer` names the other side in errors. */
  constructor(
    private readonly send: (envelope: Envelope) => void | Promise<void>,
    private readonly options: EnvelopeChannelOptions,
    private readonly onClose: () => void,
    private readonly peer = "the app",
  ) {}

  /** Why the channel is gone, once it is. */
  get closedWith(): AbpClosedError | undefined {
    return this.gone;
  }

  /** Requests waiting for an answer (for tests and leak checks). */
  get pendingCount(): number {
    return this.pending.size;
  }

  async shutdown(payload: ShutdownPayload): Promise<void> {
    if (this.gone !== undefined) throw this.gone;
    await this.send({ type: "shutdown", timestamp: Date.now(), payload });
  }

  async close(): Promise<void> {
    this.fail("the agent closed the channel");
    this.onClose();
  }

  /** The adapter hands over each message that arrived (a JSON string or a cloned object). */
  receive(data: unknown): void {
    if (this.gone !== undefined) return;
    const max = this.options.maxMessageBytes ?? LIMITS.maxMessageBytes;
    if (messageSize(data, max) > max) return this.refuse("MESSAGE_TOO_LARGE", `message from the app is over the size limit of ${max} bytes`);
    const value = messageValue(data);
    if (value === NOT_JSON) return this.refuse("INVALID_MESSAGE", "message from the app is not valid JSON");
    const checked = checkEnvelope(value);
    if (!checked.ok) return this.refuse("INVALID_MESSAGE", `invalid envelope from the app: ${checked.message}`, checked.id);
    const { envelope } = checked;
    switch (envelope.type) {
      case "initialize-result":
      case "capabilities/call-result":
      case "capabilities/cancel-result":
        return this.settle(envelope.type, envelope.id, envelope.payload);
      case "progress": {
        const progress = ProgressSchema.safeParse(envelope.payload);
        if (!progress.success) return this.refuse("INVALID_MESSAGE", `invalid progress from the app: ${firstIssue(progress.error)}`);
        this.progress.get(progress.data.progressToken)?.(progress.data);
        return;
      }
      case "notification": {
        const note = NotificationSchema.safeParse(envelope.payload);
        if (!note.success) return this.refuse("INVALID_MESSAGE", `invalid notification from the app: ${firstIssue(note.error)}`);
        const { error } = note.data;
        const waiting = error === undefined ? undefined : this.take(note.data.inReplyTo);
        if (error !== undefined && waiting !== undefined) {
          return waiting.reject(new AbpProtocolError(error.code, `the app refused the ${waiting.type}: ${error.message}`));
        }
        // The app's page is going away (postMessage has no close event of its own).
        if (note.data.event === "closing") return this.fail("the app's page went away (it closed or navigated)");
        this.options.onNotification?.(note.data);
        return;
      }
      default:
        return this.refuse("UNEXPECTED_TYPE", `the app sent "${envelope.type}", which only an agent sends`);
    }
  }

  /** A carrier without envelopes (Playwright) hands over the answer to request `id`: measured and checked here. */
  answer(id: string, payload: unknown): void {
    const waiting = this.pending.get(id);
    if (waiting === undefined) return;
    const max = this.options.maxMessageBytes ?? LIMITS.maxMessageBytes;
    if (messageSize(payload, max) > max) {
      return this.refuse("MESSAGE_TOO_LARGE", `${waiting.type} answer from ${this.peer} is over the size limit of ${max} bytes`, id);
    }
    this.settle(RESULT_TYPE[waiting.type], id, payload);
  }

  /** A carrier says request `id` (and only it) failed. */
  reject(id: string, error: Error): void {
    this.take(id)?.reject(error);
  }

  /** The adapter says the channel is gone; everything pending rejects with `reason`. */
  fail(reason: string): void {
    if (this.gone !== undefined) return;
    this.gone = new AbpClosedError(reason);
    for (const id of [...this.pending.keys()]) this.take(id)?.reject(this.gone);
  }

  /**
   * Sends one request; one over the size limit is refused at once (AbpProtocolError `MESSAGE_TOO_LARGE`), unsent.
   * Aborting `signal` forgets the request and rejects it with the signal's reason. `onProgress` hears the
   * progress of a call that gave a progressToken.
   */
  request<T extends RequestType>(
    type: T,
    payload: Exchange[T][0],
    signal?: AbortSignal,
    onProgress?: (progress: ProgressPayload) => void,
  ): Promise<Exchange[T][1]> {
    if (this.gone !== undefined) return Promise.reject(this.gone);
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const id = `${this.prefix}${++this.nextId}`;
    const envelope: Envelope = { type, id, timestamp: Date.now(), payload };
    // The app would refuse it anyway; refusing here names the limit and sends nothing.
    const max = this.options.maxMessageBytes ?? LIMITS.maxMessageBytes;
    if (messageSize(envelope, max) > max) {
      return Promise.reject(new AbpProtocolError("MESSAGE_TOO_LARGE", `${type} is over the size limit of ${max} bytes; nothing was sent`));
    }
    return new Promise((resolve, reject) => {
      const waiting: Pending = { type, resolve: resolve as (payload: unknown) => void, reject };
      const token = "options" in payload ? payload.options?.progressToken : undefined;
      if (onProgress !== undefined && token !== undefined) {
        waiting.progressToken = token;
        this.progress.set(token, onProgress);
      }
      if (signal !== undefined) {
        // Its caller gave up on it (a settled call's grace ended): nothing of it stays here.
        const forget = () => this.take(id)?.reject(signal.reason);
        signal.addEventListener("abort", forget, { once: true });
        waiting.unlink = () => signal.removeEventListener("abort", forget);
      }
      this.pending.set(id, waiting);
      try {
        this.send(envelope);
      } catch (error) {
        this.take(id)?.reject(new AbpClosedError(`could not send ${type}: ${errorMessage(error)}`));
      }
    });
  }

  /** Every answer settles its request, well-formed or not; one to a request already settled here is dropped. */
  private settle(type: MessageType, id: string | undefined, payload: unknown): void {
    const waiting = this.take(id);
    if (waiting === undefined) return;
    if (RESULT_TYPE[waiting.type] !== type) {
      return waiting.reject(new AbpProtocolError("UNEXPECTED_TYPE", `the app answered a ${waiting.type} with "${type}"`));
    }
    // A call's usual answer is checked by hand; anything else (and anything wrong) by its schema.
    if (waiting.type === "capabilities/call" && isPlainCallResult(payload)) return waiting.resolve(payload);
    const parsed = RESULT_SCHEMAS[waiting.type].safeParse(payload);
    if (!parsed.success) {
      const problem = `invalid ${waiting.type} answer from ${this.peer}: ${firstIssue(parsed.error)}`;
      return waiting.reject(new AbpProtocolError("INVALID_MESSAGE", problem));
    }
    waiting.resolve(parsed.data);
  }

  /** Forgets the request pending under `id`, if any; returns it, to be answered. */
  private take(id: string | undefined): Pending | undefined {
    const waiting = id === undefined ? undefined : this.pending.get(id);
    if (waiting === undefined) return undefined;
    this.pending.delete(id as string);
    waiting.unlink?.();
    if (waiting.progressToken !== undefined) this.progress.delete(waiting.progressToken);
    return waiting;
  }

  /** Bad input from the app: the request it concerns (if any) fails with the reason, the channel survives. */
  private refuse(code: string, message: string, id?: string): void {
    const error = new AbpProtocolError(code, message);
    const waiting = this.take(id);
    if (waiting === undefined) this.options.onError?.(error);
    else waiting.reject(error);
  }
}

interface PostMessageTarget {
  postMessage(message: unknown, targetOrigin: string): void;
}

interface WorkerTarget {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  removeEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}

interface WindowTarget {
  /** The app's window (an iframe's contentWindow, a popup). */
  target: PostMessageTarget;
  /** The app's exact origin: requests go only there, answers are heard only from there. */
  targetOrigin: string;
  /** Where the answers arrive; default this window. */
  receiver?: Pick<WorkerTarget, "addEventListener" | "removeEventListener">;
}

export type PostMessageTransportOptions = EnvelopeChannelOptions
  & (
    | WindowTarget
    | {
      /** A dedicated worker: its messages carry no origin, the object itself is the check. */
      worker: WorkerTarget;
    }
  );

/** ABP over postMessage to an app's window, iframe or worker, as structured clones; only the app's exact origin, never "*". */
export function postMessageTransport(options: PostMessageTransportOptions): EnvelopeChannel {
  const window = "worker" in options ? undefined : options;
  if (window?.targetOrigin === "*") throw new TypeError("postMessageTransport needs the app's exact origin, not \"*\"");
  const receiver = "worker" in options ? options.worker : (options.receiver ?? (globalThis as unknown as WorkerTarget));
  const post = (envelope: Envelope) =>
    "worker" in options ? options.worker.postMessage(envelope) : options.target.postMessage(envelope, options.targetOrigin);
  const listener = (event: MessageEvent) => {
    if (window === undefined || fromApp(event, window, options.onError)) channel.receive(event.data);
  };
  const channel = new EnvelopeChannel(post, options, () => receiver.removeEventListener("message", listener));
  receiver.addEventListener("message", listener);
  return channel;
}

/** A window's message is the app's only from its exact origin and its window. */
function fromApp(event: MessageEvent, { target, targetOrigin }: WindowTarget, onError: EnvelopeChannelOptions["onError"]): boolean {
  const { origin } = event;
  if (origin !== targetOrigin) {
    // Other windows' unrelated traffic is none of our business; an ABP envelope from elsewhere is worth a word.
    if (looksLikeAbp(event.data)) {
      onError?.(new AbpProtocolError("WRONG_ORIGIN", `ABP message from origin "${origin}" ignored (expected "${targetOrigin}")`));
    }
    return false;
  }
  // Another frame of the same origin is not ours. A message posted while the app's page unloads
  // (its last answers, its "closing") arrives with no source at all: the origin vouches for it.
  return event.source === target || event.source === null;
}

function looksLikeAbp(data: unknown): boolean {
  const value = typeof data === "string" && data.length > LIMITS.maxMessageBytes ? undefined : messageValue(data);
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  return typeof type === "string" && (MESSAGE_TYPES as readonly string[]).includes(type);
}

/** What both `ws` and the browser's WebSocket offer. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
}

const OPEN = 1;

/** ABP over a WebSocket (`ws` or the browser's), as JSON text frames; its closing rejects everything pending. */
export function webSocketTransport(socket: WebSocketLike, options: EnvelopeChannelOptions = {}): EnvelopeChannel {
  const channel = new EnvelopeChannel(
    (envelope) => {
      if (socket.readyState !== OPEN) throw new Error("the WebSocket is not open");
      socket.send(JSON.stringify(envelope));
    },
    options,
    () => socket.close(1000, "ABP client closed"),
  );
  socket.addEventListener("message", (event) => {
    // ws hands binary frames over as Buffers: not an ABP envelope.
    if (typeof event.data === "string") channel.receive(event.data);
    else options.onError?.(new AbpProtocolError("INVALID_MESSAGE", "binary frames are not ABP envelopes"));
  });
  socket.addEventListener("close", (event) =>
    channel.fail(`the WebSocket closed (code ${event.code}${event.reason ? `, ${event.reason}` : ""})`),
  );
  if (socket.readyState > OPEN) channel.fail("the WebSocket was already closed");
  return channel;
}
