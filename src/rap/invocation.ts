import type { Invocation } from "./messages.js";
import type { RequestSigner } from "./signer.js";

export interface PostInvocationOptions {
  readonly signer?: RequestSigner;
  readonly fetch?: typeof fetch;
  readonly signal?: AbortSignal;
  /** Extra headers (the W3C trace context), set before the signer runs so a signature covers them. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * POSTs an invocation to a toolset's `endpoint`, signed like every request to the server.
 * A tool answers 200 at once and works asynchronously; anything else is an error whose
 * message names the status.
 */
export async function postInvocation(
  endpoint: string | URL,
  invocation: Invocation,
  options: PostInvocationOptions = {},
): Promise<void> {
  const url = new URL(endpoint);
  const body = JSON.stringify(invocation);
  const headers = new Headers({ ...options.headers, "content-type": "application/json" });
  await options.signer?.({ url, method: "POST", headers, body });
  const response = await (options.fetch ?? fetch)(url, {
    method: "POST",
    headers,
    body,
    redirect: "manual",
    ...(options.signal ? { signal: options.signal } : {}),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`tool server answered the invocation with HTTP ${response.status}`);
}
