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

/**
 * One way of reaching an app: postMessage, WebSocket, Playwright. A transport only carries
 * requests and answers; the call and cancel logic lives once, in AbpClient.
 *
 * Every promise it returns settles exactly once; when the channel goes away, each pending one
 * rejects with an AbpClosedError naming why.
 */
export interface AbpTransport {
  initialize(params: InitializeParams): Promise<InitializeResult>;
  call(request: CallRequest, onProgress?: (progress: ProgressPayload) => void): Promise<CallResult>;
  cancel(request: CancelRequest): Promise<CancelResult>;
  shutdown(payload: ShutdownPayload): Promise<void>;
  /** Resolves, with the reason, once the channel is gone for good. */
  readonly closed: Promise<AbpClosedError>;
  close(): Promise<void>;
}
