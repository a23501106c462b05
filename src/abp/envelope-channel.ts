/**
 * The agent side of an envelope channel (postMessage, WebSocket): sends requests with fresh
 * envelope ids, matches each `-result` to its request by that id, validates everything that comes
 * back, and rejects whatever is pending when the channel goes away. A transport adapter only
 * supplies `send` and feeds `receive` / `fail`.
 */
import type { z } from "zod";
import {
  type CallRequest,
  type CallResult,
  type CancelRequest,
  type CancelResult,
  type Envelope,
  type InitializeParams,
  type InitializeResult,
  LIMITS,
  type MessageType,
  messageSize,
  messageValue,
  NOT_JSON,
  type ProgressPayload,
  RESULT_TYPE,
  type RequestType,
  type ShutdownPayload,
} from "./app/protocol.js";
import { envelopeIdOf } from "./app/validate.js";
import { AbpClosedError, AbpProtocolError } from "./errors.js";
import {
  CallResultSchema,
  CancelResultSchema,
  describeIssue,
  EnvelopeSchema,
  InitializeResultSchema,
  isExactEnvelope,
  isPlainCallResult,
  NotificationSchema,
  ProgressSchema,
} from "./schemas.js";
import type { AbpTransport, TransportRequestOptions } from "./client.js";

export interface EnvelopeChannelOptions {
  maxMessageBytes?: number;
  /** Told of input that was refused and of notifications nobody waits for; the channel carries on. */
  onError?: (error: AbpProtocolError) => void;
  onNotification?: (payload: z.infer<typeof NotificationSchema>) => void;
}

interface Pending {
  type: RequestType;
  resolve(payload: unknown): void;
  reject(error: unknown): void;
  progressToken?: string | number;
  /** Stops listening to the request's signal. */
  unlink?: () => void;
}

const RESULT_SCHEMAS: Record<RequestType, z.ZodType> = {
  "initialize": InitializeResultSchema,
  "capabilities/call": CallResultSchema,
  "capabilities/cancel": CancelResultSchema,
};

let channels = 0;

export class EnvelopeChannel implements AbpTransport {
  readonly closed: Promise<AbpClosedError>;
  private readonly pending = new Map<string, Pending>();
  private readonly progress = new Map<string | number, (progress: ProgressPayload) => void>();
  private readonly prefix = `c${++channels}-`;
  private nextId = 0;
  private closedWith: AbpClosedError | undefined = undefined;
  private markClosed!: (error: AbpClosedError) => void;

  constructor(
    private readonly send: (envelope: Envelope) => void,
    private readonly options: EnvelopeChannelOptions = {},
    private readonly onClose: () => void = () => {},
  ) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
  }

  /** Requests waiting for an answer (for tests and leak checks). */
  get pendingCount(): number {
    return this.pending.size;
  }

  initialize(params: InitializeParams): Promise<InitializeResult> {
    return this.request("initialize", params) as Promise<InitializeResult>;
  }

  call(
    request: CallRequest,
    onProgress?: (progress: ProgressPayload) => void,
    options?: TransportRequestOptions,
  ): Promise<CallResult> {
    const token = request.options?.progressToken;
    const progress: [string | number, (p: ProgressPayload) => void] | undefined =
      token !== undefined && onProgress ? [token, onProgress] : undefined;
    return this.request("capabilities/call", request, progress, options?.signal) as Promise<CallResult>;
  }

  cancel(request: CancelRequest, options?: TransportRequestOptions): Promise<CancelResult> {
    return this.request("capabilities/cancel", request, undefined, options?.signal) as Promise<CancelResult>;
  }

  async shutdown(payload: ShutdownPayload): Promise<void> {
    if (this.closedWith !== undefined) throw this.closedWith;
    this.send({ type: "shutdown", timestamp: Date.now(), payload });
  }

  async close(): Promise<void> {
    this.fail("the agent closed the channel");
    this.onClose();
  }

  /** The adapter hands over each message that arrived (a JSON string or a cloned object). */
  receive(data: unknown): void {
    if (this.closedWith !== undefined) return;
    const max = this.options.maxMessageBytes ?? LIMITS.maxMessageBytes;
    if (messageSize(data, max) > max) return this.refuse("MESSAGE_TOO_LARGE", `message from the app is over the size limit of ${max} bytes`);
    const value = messageValue(data);
    if (value === NOT_JSON) return this.refuse("INVALID_MESSAGE", "message from the app is not valid JSON");
    let envelope: z.infer<typeof EnvelopeSchema>;
    if (isExactEnvelope(value)) envelope = value;
    else {
      const parsed = EnvelopeSchema.safeParse(value);
      if (!parsed.success) return this.refuse("INVALID_MESSAGE", `invalid envelope from the app: ${describeIssue(parsed.error)}`, envelopeIdOf(value));
      envelope = parsed.data;
    }
    switch (envelope.type) {
      case "initialize-result":
      case "capabilities/call-result":
      case "capabilities/cancel-result":
        return this.answer(envelope.type, envelope.id, envelope.payload);
      case "progress": {
        const progress = ProgressSchema.safeParse(envelope.payload);
        if (!progress.success) return this.refuse("INVALID_MESSAGE", `invalid progress from the app: ${describeIssue(progress.error)}`);
        this.progress.get(progress.data.progressToken)?.(progress.data as ProgressPayload);
        return;
      }
      case "notification": {
        const note = NotificationSchema.safeParse(envelope.payload);
        if (!note.success) return this.refuse("INVALID_MESSAGE", `invalid notification from the app: ${describeIssue(note.error)}`);
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

  /** The adapter says the channel is gone; everything pending rejects with `reason`. */
  fail(reason: string): void {
    if (this.closedWith !== undefined) return;
    const error = new AbpClosedError(reason);
    this.closedWith = error;
    for (const id of [...this.pending.keys()]) this.take(id)?.reject(error);
    this.markClosed(error);
  }

  private request(
    type: RequestType,
    payload: unknown,
    progress?: [string | number, (p: ProgressPayload) => void],
    signal?: AbortSignal,
  ): Promise<unknown> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const id = `${this.prefix}${++this.nextId}`;
    const envelope: Envelope = { type, id, timestamp: Date.now(), payload };
    // The app would refuse it anyway; refusing here names the limit and sends nothing.
    const max = this.options.maxMessageBytes ?? LIMITS.maxMessageBytes;
    if (messageSize(envelope, max) > max) {
      return Promise.reject(new AbpProtocolError("MESSAGE_TOO_LARGE", `${type} is over the size limit of ${max} bytes; nothing was sent`));
    }
    return new Promise((resolve, reject) => {
      const waiting: Pending = { type, resolve, reject };
      if (progress !== undefined) {
        waiting.progressToken = progress[0];
        this.progress.set(progress[0], progress[1]);
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
        this.take(id)?.reject(new AbpClosedError(`could not send ${type}: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  }

  private answer(type: MessageType, id: string | undefined, payload: Record<string, unknown>): void {
    // Every answer settles its request, well-formed or not.
    const waiting = this.take(id);
    // Answers to calls already settled here (after a grace period or a shutdown) are dropped.
    if (waiting === undefined) return;
    if (RESULT_TYPE[waiting.type] !== type) {
      return waiting.reject(new AbpProtocolError("UNEXPECTED_TYPE", `the app answered a ${waiting.type} with "${type}"`));
    }
    // A call's usual answer is checked by hand; anything else (and anything wrong) by its schema.
    if (waiting.type === "capabilities/call" && isPlainCallResult(payload)) return waiting.resolve(payload);
    const parsed = RESULT_SCHEMAS[waiting.type].safeParse(payload);
    if (!parsed.success) {
      return waiting.reject(new AbpProtocolError("INVALID_MESSAGE", `invalid ${type} from the app: ${describeIssue(parsed.error)}`));
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
