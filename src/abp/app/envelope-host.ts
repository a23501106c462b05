/**
 * Serves an AbpApp over an envelope channel: checks each message, dispatches it, answers with the
 * request's envelope id. Bad input gets a `notification` `{event: "error", error, inReplyTo?}`, nothing else.
 */
import type { AbpApp } from "./abp-app.js";
import { type Envelope, LIMITS, type MessageType, type NotificationPayload, type ProgressPayload } from "./protocol.js";
import { checkAgentMessage } from "./validate.js";

type Reply = (envelope: Envelope) => void;

export interface Rejection {
  code: string;
  message: string;
}

export interface EnvelopeHostOptions {
  maxMessageBytes?: number;
  /** Told of every message refused (bad envelope, wrong origin…), for logs and tests. */
  onReject?: (rejection: Rejection) => void;
}

export class EnvelopeHost {
  /** Messages refused so far. */
  rejected = 0;

  constructor(private readonly app: AbpApp, private readonly options: EnvelopeHostOptions = {}) {}

  receive(data: unknown, reply: Reply): void {
    const checked = checkAgentMessage(data, this.options.maxMessageBytes ?? LIMITS.maxMessageBytes);
    if (!checked.ok) {
      this.reject({ code: checked.code, message: checked.message });
      const payload: NotificationPayload = { event: "error", error: { code: checked.code, message: checked.message } };
      if (checked.id !== undefined) payload.inReplyTo = checked.id;
      reply(envelope("notification", undefined, payload));
      return;
    }
    const { message } = checked;
    switch (message.type) {
      case "initialize":
        reply(envelope("initialize-result", message.id, this.app.initialize(message.payload)));
        return;
      case "capabilities/call": {
        const { capability, callId, params, options } = message.payload;
        const id = message.id;
        // Progress goes back only for a call that asked for it (the app checks the token too).
        const onProgress = options?.progressToken === undefined
          ? undefined
          : (progress: ProgressPayload) => reply(envelope("progress", undefined, progress));
        const callOptions = options === undefined ? { callId } : { ...options, callId };
        this.app.dispatch(capability, params ?? {}, callOptions, onProgress, (result) => reply(envelope("capabilities/call-result", id, result)));
        return;
      }
      case "capabilities/cancel":
        reply(envelope("capabilities/cancel-result", message.id, this.app.cancel(message.payload.callId, message.payload.reason)));
        return;
      case "shutdown":
        this.app.shutdown(message.payload);
        return;
    }
  }

  /** Counts and reports a refused message (one the host cannot even answer, such as a wrong origin). */
  reject(rejection: Rejection): void {
    this.rejected++;
    this.options.onReject?.(rejection);
  }
}

export function envelope(type: MessageType, id: string | undefined, payload: unknown): Envelope {
  return id === undefined ? { type, timestamp: Date.now(), payload } : { type, id, timestamp: Date.now(), payload };
}
