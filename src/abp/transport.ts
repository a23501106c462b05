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
 * One way of reaching an app (postMessage, WebSocket, Playwright): it only carries requests and answers.
 * Each promise settles once; when the channel goes away, each pending one rejects with an AbpClosedError.
 */
export interface AbpTransport {
  initialize(params: InitializeParams): Promise<InitializeResult>;
  /** Sends a call; one over the size limit is refused at once (AbpProtocolError `MESSAGE_TOO_LARGE`), unsent. */
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
