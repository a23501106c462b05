/**
 * Drives an AbpClient by keys, so a test can start, abort and await calls from outside the
 * realm the client lives in (Node, or an agent page reached through page.evaluate). Browser-safe.
 */
import type { AbpCallResult, AbpClient, CancelCause, CancelResult } from "../../../src/abp/index.js";
import type { InitializeResult } from "../../../src/abp/schemas.js";

export interface StartOptions {
  timeout?: number;
  callId?: string;
  progressToken?: string;
  /** Abort right after the call is sent, in the same turn of the event loop. */
  abortAtOnce?: boolean;
}

export type Outcome = { ok: true; result: AbpCallResult } | { ok: false; error: string; name: string };

export interface Ack {
  ack: CancelResult;
  cause: CancelCause;
}

interface Entry {
  controller: AbortController;
  outcome: Promise<Outcome>;
  acks: Ack[];
  progress: number[];
}

export class CallHarness {
  readonly errors: string[] = [];
  private readonly calls = new Map<string, Entry>();

  constructor(readonly client: AbpClient) {}

  initialize(): Promise<InitializeResult> {
    return this.client.initialize();
  }

  start(key: string, capability: string, params?: Record<string, unknown>, options: StartOptions = {}): void {
    const controller = new AbortController();
    const acks: Ack[] = [];
    const progress: number[] = [];
    const outcome = this.client
      .call(capability, params, {
        signal: controller.signal,
        ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
        ...(options.callId === undefined ? {} : { callId: options.callId }),
        ...(options.progressToken === undefined ? {} : { progressToken: options.progressToken }),
        onProgress: (p) => progress.push(p.progress),
        onCancelAcknowledged: (ack, cause) => acks.push({ ack, cause }),
      })
      .then(
        (result): Outcome => ({ ok: true, result }),
        (error: Error): Outcome => ({ ok: false, error: error.message, name: error.name }),
      );
    this.calls.set(key, { controller, outcome, acks, progress });
    if (options.abortAtOnce) controller.abort();
  }

  abort(key: string): void {
    this.entry(key).controller.abort();
  }

  outcome(key: string): Promise<Outcome> {
    return this.entry(key).outcome;
  }

  /** Resolves once `count` acknowledgements arrived for the call. */
  async acks(key: string, count = 1): Promise<Ack[]> {
    const { acks } = this.entry(key);
    while (acks.length < count) await new Promise((resolve) => setTimeout(resolve, 2));
    return acks;
  }

  progress(key: string): number[] {
    return this.entry(key).progress;
  }

  cancel(callId: string, reason?: string): Promise<CancelResult> {
    return this.client.cancel(callId, reason);
  }

  shutdown(): Promise<void> {
    return this.client.shutdown("test shutdown");
  }

  /** Calls in flight in the client (its job table). */
  inFlight(): number {
    return this.client.calls.size;
  }

  forget(key: string): void {
    this.calls.delete(key);
  }

  /** Aborts a started call and measures, in this realm, the time from abort() to the app's acknowledgement. */
  async timeCancel(key: string): Promise<number> {
    const entry = this.entry(key);
    const before = entry.acks.length;
    const started = performance.now();
    entry.controller.abort();
    while (entry.acks.length === before) await new Promise((resolve) => queueMicrotask(() => setTimeout(resolve, 0)));
    return performance.now() - started;
  }

  /** Runs `count` calls one after another; returns the total time in ms. */
  async timeCalls(count: number, capability: string, params: Record<string, unknown>): Promise<number> {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const result = await this.client.call(capability, params);
      if (!result.success) throw new Error(`call ${i} failed: ${JSON.stringify(result)}`);
    }
    return performance.now() - started;
  }

  /** Starts `count` calls keyed `${prefix}${i}`. */
  startMany(prefix: string, count: number, capability: string): void {
    for (let i = 0; i < count; i++) this.start(`${prefix}${i}`, capability, {});
  }

  /** Aborts them all, awaits every outcome, forgets them, and counts how each ended. */
  async abortMany(prefix: string, count: number): Promise<Record<string, number>> {
    for (let i = 0; i < count; i++) this.abort(`${prefix}${i}`);
    const tally: Record<string, number> = {};
    for (let i = 0; i < count; i++) {
      const outcome = await this.outcome(`${prefix}${i}`);
      const kind = outcome.ok ? (outcome.result.cancelled === true ? `cancelled by ${outcome.result.cancelledBy}` : "answered") : outcome.name;
      tally[kind] = (tally[kind] ?? 0) + 1;
      this.forget(`${prefix}${i}`);
    }
    return tally;
  }

  private entry(key: string) {
    const entry = this.calls.get(key);
    if (entry === undefined) throw new Error(`no call started under "${key}"`);
    return entry;
  }
}
