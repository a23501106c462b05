/** `fetch` for work done on behalf of a call: aborted by the call's signal (and the request's own, if any). */
export function fetchForCall(callSignal: AbortSignal, input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const signal = init.signal ? AbortSignal.any([callSignal, init.signal]) : callSignal;
  return fetch(input, { ...init, signal });
}
