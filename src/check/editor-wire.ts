/**
 * The editor's end of one run: raw JSON-RPC on the stdio of the process the editor started. Raw, not
 * the SDK's ClientSideConnection: a checker must see what an SDK hides (a second answer, a line that is not JSON).
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { performance } from "node:perf_hooks";
import { classify, preview, readNdjson } from "../wire/index.js";
import { outcomeOf } from "./verdict.js";

export type Message = Record<string, unknown>;

/** A message the agent sent, and when (performance.now()). */
interface Logged {
  readonly at: number;
  readonly message: Message;
}

export class EditorWire {
  private readonly log: Logged[] = [];
  /** The first stdout line that was not JSON-RPC (an agent logging to stdout breaks editors), and how many there were. */
  firstJunk = "";
  junkLines = 0;
  /** Permission requests the agent sent that nobody answered yet, by id. */
  readonly openDialogs = new Map<unknown, Message>();
  /** Allow each permission dialog as it opens (a cell whose tool must run), until Stop. */
  allowDialogs = false;
  onMessage: (message: Message) => void = () => {};
  private nextId = 0;
  private readonly waiters = new Map<unknown, (message: Message) => void>();

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdin.on("error", () => {}); // a closed pipe is seen as the exit
    readNdjson(child.stdout, {
      value: (value, line) => {
        if (classify(value).kind === "invalid") return this.noteJunk(line);
        this.receive(value as Message);
      },
      problem: (problem) => this.noteJunk(problem.kind === "parse" ? problem.line : `(a line of ${problem.bytes} bytes)`),
      end: () => {},
    });
  }

  private noteJunk(line: string): void {
    if (this.junkLines++ === 0) this.firstJunk = preview(line);
  }

  private receive(message: Message): void {
    this.log.push({ at: performance.now(), message });
    const isRequest = "method" in message && "id" in message;
    if (isRequest && message.method === "session/request_permission") this.openDialogs.set(message.id, message);
    else if (isRequest) {
      // The check offers no fs or terminal capability: anything else it is asked is unknown to it.
      this.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: `Method not found: ${String(message.method)}` } });
    } else if (!("method" in message)) this.waiters.get(message.id)?.(message);
    else if (message.method === "$/cancel_request") this.answerDialog((message.params as { requestId?: unknown } | undefined)?.requestId, false);
    if (isRequest && this.allowDialogs) this.answerDialog(message.id, true);
    this.onMessage(message);
  }

  private send(message: Message): void {
    if (this.child.stdin.writable) this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  request(method: string, params: unknown): { id: number; answer: Promise<Message> } {
    const id = this.nextId++;
    const answer = new Promise<Message>((resolve) => this.waiters.set(id, resolve));
    this.send({ jsonrpc: "2.0", id, method, params });
    return { id, answer };
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  /** Answers every open dialog `cancelled`, as an editor does when its user presses Stop. */
  cancelDialogs(): void {
    this.allowDialogs = false;
    for (const id of [...this.openDialogs.keys()]) this.answerDialog(id, false);
  }

  /** Answers an open dialog: allowed with its allow-once option (else another allow, else the first), or `cancelled`. */
  private answerDialog(id: unknown, allow: boolean): void {
    const params = this.openDialogs.get(id)?.params as { options?: { optionId?: unknown; kind?: unknown }[] } | undefined;
    if (!this.openDialogs.delete(id)) return;
    const options = params?.options ?? [];
    const chosen = options.find((o) => o.kind === "allow_once") ?? options.find((o) => String(o.kind).startsWith("allow")) ?? options[0];
    const outcome = allow ? { outcome: "selected", optionId: chosen?.optionId } : { outcome: "cancelled" };
    this.send({ jsonrpc: "2.0", id, result: { outcome } });
  }

  /** `session/update`s read since `since` (performance.now()). */
  private updatesSince(since: number): { at: number; update: Message }[] {
    return this.log
      .filter((entry) => entry.at >= since && entry.message.method === "session/update")
      .map((entry) => ({ at: entry.at, update: ((entry.message.params as Message | undefined)?.update ?? {}) as Message }));
  }

  /** Whether the turn showed work since `since`: an update other than v2's state and echoed user message. */
  progressSince(since: number): boolean {
    return this.updatesSince(since).some(({ update }) => update.sessionUpdate !== "state_update" && update.sessionUpdate !== "user_message");
  }

  /**
   * How the prompt `id` ended, each with when. v1: its answers. v2: its answer acknowledges insertion, so an
   * inserted prompt ends with each idle `state_update` after that; a withdrawn one with its error.
   */
  turnEnds(id: unknown, protocol: number): { at: number; outcome: string }[] {
    const answers = this.log.filter((entry) => !("method" in entry.message) && entry.message.id === id);
    const inserted = protocol === 2 ? answers.find((entry) => typeof (entry.message.result as Message | undefined)?.messageId === "string") : undefined;
    const idles = (inserted === undefined ? [] : this.updatesSince(inserted.at))
      .filter(({ update }) => update.sessionUpdate === "state_update" && update.state === "idle")
      .map(({ at, update }) => ({ at, outcome: typeof update.stopReason === "string" ? update.stopReason : "idle without stopReason" }));
    // A v2 result without a messageId (a v1 `{stopReason}`, say) is invalid there: it is not taken for a stop.
    const told = (entry: Logged) => ({ at: entry.at, outcome: protocol === 2 && "result" in entry.message ? "answer without messageId" : outcomeOf(entry.message) });
    return [...answers.filter((entry) => entry !== inserted).map(told), ...idles].sort((a, b) => a.at - b.at);
  }
}
