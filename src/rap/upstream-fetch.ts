/**
 * `fetch` for work done on behalf of a call: the upstream request is aborted when the
 * call's signal aborts (and by the request's own signal, if it has one).
 */
export function fetchForCall(callSignal: AbortSignal, input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const signal = init.signal ? AbortSignal.any([callSignal, init.signal]) : callSignal;
  return fetch(input, { ...init, signal });
}
