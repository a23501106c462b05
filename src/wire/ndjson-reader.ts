import type { Readable } from "node:stream";
import { LineSplitter } from "./line-splitter.js";
import { escapeControl } from "./escape-control.js";
import { invalidRequestResponse, type JsonRpcResponse, parseErrorResponse } from "./jsonrpc.js";

const BOM = "\uFEFF";

/**
 * Parses one ndjson line; a refused line gets a second chance without a BOM and trimmed, as the
 * SDK's own reader accepts it (a peer that works without acp-cancel must work with it).
 */
export function parseJsonLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const cleaned = (text.startsWith(BOM) ? text.slice(1) : text).trim();
    if (cleaned === text) throw error;
    return JSON.parse(cleaned);
  }
}

export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Why a line could not become a message. */
export type FramingProblem =
  | { kind: "parse"; detail: string; bytes: number; line: string }
  | { kind: "oversize"; bytes: number; limit: number; head?: string };

export interface NdjsonReaderHandlers {
  /** One parsed JSON value (not yet checked to be JSON-RPC); `bytes[start, end)`: its line, during the call. */
  value(value: unknown, line: string, bytes: Buffer, start: number, end: number): void;
  /** A line that was not JSON, or too long. Never fatal. */
  problem(problem: FramingProblem): void;
  /** The stream ended or failed. */
  end(error?: Error): void;
  /** Every line of one chunk has been handled (called from the same listener: no second one). */
  chunkEnd?(): void;
}

/** The start of a peer's line, for a message. */
export function preview(line: string): string {
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}

/**
 * JSON.parse's message without the line's text that V8 quotes in some (`Unexpected token 'S', "SECRET…"
 * is not valid JSON`): a bad line may hold a credential, and this text goes into answers and logs.
 */
function parseDetail(message: string): string {
  const cut = message.replace(/, ".*$/s, "").replace(/^(Unexpected token) '.'/u, "$1").trim();
  return cut.includes('"') ? "not JSON" : cut;
}

/** A line splitter that parses each line as JSON: every ndjson reader of this library. */
export function jsonLineSplitter(
  handlers: Pick<NdjsonReaderHandlers, "value" | "problem">,
  maxLineBytes: number,
): LineSplitter {
  return new LineSplitter(
    {
      line(text, bytes, start, end) {
        let value: unknown;
        try {
          value = parseJsonLine(text);
        } catch (error) {
          handlers.problem({ kind: "parse", detail: parseDetail((error as Error).message), bytes: end - start, line: preview(text) });
          return;
        }
        handlers.value(value, text, bytes, start, end);
      },
      oversize(bytes, head) {
        handlers.problem({ kind: "oversize", bytes, limit: maxLineBytes, head: head.toString() });
      },
    },
    maxLineBytes,
  );
}

/** The answer to a bad line from a peer that is owed answers: -32700, or -32600 when too long. */
export function framingErrorResponse(problem: FramingProblem): JsonRpcResponse {
  if (problem.kind === "parse") return parseErrorResponse(describeProblem(problem));
  return invalidRequestResponse(null, describeProblem(problem));
}

/** Reads newline-delimited JSON from a Node stream. Returns a function that detaches it. */
export function readNdjson(
  stream: Readable,
  handlers: NdjsonReaderHandlers,
  options: { maxLineBytes?: number } = {},
) {
  const splitter = jsonLineSplitter(handlers, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  let ended = false;
  const finish = (error?: Error) => {
    if (ended) return;
    ended = true;
    if (error === undefined) splitter.end();
    handlers.end(error);
  };
  const listeners = {
    data: (chunk: Buffer | string) => {
      splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
      handlers.chunkEnd?.();
    },
    end: () => finish(),
    error: (error: Error) => finish(error),
    // A socket's "close" passes `hadError`, which is no Error.
    close: () => finish(),
  };
  for (const [event, listener] of Object.entries(listeners)) stream.on(event, listener);
  return () => {
    for (const [event, listener] of Object.entries(listeners)) stream.off(event, listener);
  };
}

/**
 * What was wrong with a line, fit to answer and to log: its size and the parser's complaint. Its text (escaped)
 * only `withText`, for a peer whose stray output is the user's to read, never for one that may carry a secret.
 */
export function describeProblem(problem: FramingProblem, withText = false): string {
  return problem.kind === "parse"
    ? `line is not valid JSON (${problem.bytes} bytes: ${escapeControl(problem.detail)})${withText ? `: ${escapeControl(problem.line)}` : ""}`
    : `line of ${problem.bytes} bytes exceeds the ${problem.limit}-byte limit`;
}
