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
