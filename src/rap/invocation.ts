import type { Invocation } from "./messages.js";
import type { RequestSigner } from "./signer.js";

interface PostInvocationOptions {
  readonly signer?: RequestSigner | undefined;
  readonly fetch?: typeof fetch | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Extra headers (the W3C trace context), set before the signer runs so a signature covers them. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** POSTs an invocation to a toolset's `endpoint`, signed; a tool answers 200 at once (else an error naming the status). */
export async function postInvocation(
  endpoint: string | URL,
  invocation: Invocation,
  options: PostInvocationOptions = {},
): Promise<void> {
  const url = new URL(endpoint);
  const body = JSON.stringify(invocation);
  const headers = new Headers({ ...options.headers, "content-type": "application/json" });
  await options.signer?.({ url, method: "POST", headers, body });
  const signal = options.signal ?? null;
  const status = await postWithFetch(options.fetch ?? fetch, url, { headers, body, signal });
  if (status !== 200) throw new Error(`tool server answered the invocation with HTTP ${status}`);
}

/** One POST through a fetch; resolves to its status once its body is read (so the connection is reused). */
export async function postWithFetch(post: typeof fetch, url: URL, init: RequestInit): Promise<number> {
  // A redirect could carry the credentials elsewhere; its status is the outcome.
  const response = await post(url, { ...init, method: "POST", redirect: "manual" });
  await response.arrayBuffer();
  return response.status;
}
