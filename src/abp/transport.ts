import type {
  CallRequest,
  CallResult,
  CancelRequest,
  CancelResult,
  InitializeParams,
  InitializeResult,
  ProgressPayload,
  ShutdownPayload,
} from "./app/protocol.js";
import type { AbpClosedError } from "./errors.js";

/** Per request: aborting `signal` makes the transport forget the request and reject it with the signal's reason. */
export interface TransportRequestOptions {
  signal?: AbortSignal;
}

/**
 * One way of reaching an app: postMessage, WebSocket, Playwright. A transport only carries
 * requests and answers; the call and cancel logic lives once, in AbpClient.
 *
 * Every promise it returns settles exactly once; when the channel goes away, each pending one
 * rejects with an AbpClosedError naming why. A request whose signal aborts leaves nothing behind.
 */
export interface AbpTransport {
  initialize(params: InitializeParams): Promise<InitializeResult>;
  /**
   * Sends a call. A call over the transport's size limit is refused at once with an
   * AbpProtocolError `MESSAGE_TOO_LARGE` naming the limit; nothing is sent.
   */
  call(
    request: CallRequest,
    onProgress?: (progress: ProgressPayload) => void,
    options?: TransportRequestOptions,
  ): Promise<CallResult>;
  cancel(request: CancelRequest, options?: TransportRequestOptions): Promise<CancelResult>;
  shutdown(payload: ShutdownPayload): Promise<void>;
  /** Resolves, with the reason, once the channel is gone for good. */
  readonly closed: Promise<AbpClosedError>;
  close(): Promise<void>;
}
