/** What a thrown value says: an Error's message, anything else as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A thrown value as an Error: itself, or an Error whose message is the value as text. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
