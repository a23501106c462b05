/** `CancelBus` over any `BusTransport`; local claims are answered in process, so they work with the backend down. */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { errorMessage } from "../core/error-message.js";
import {
  type CancelBus,
  type CancelBusOptions,
  type CancelHandler,
  type CancelOptions,
  type CancelRequest,
  type CancelVerdict,
  type Claim,
  BusUnavailableError,
  type OrphanedClaim,
  type OrphanSweepOptions,
} from "./cancel-bus.js";
import { OrphanSweep } from "./orphan-sweep.js";
import { SentAcks } from "./sent-acks.js";
import { type BusMessage, type BusTransport, bounded, type CancelMessage, closeWithin, parseBusMessage, REPLICA_DEFAULTS } from "./transport.js";

/** At most this many orphans per sweep (the next sweep takes the rest). */
const ORPHANS_PER_SWEEP = 100;

interface LocalClaim {
  onCancel: CancelHandler;
  record: string | undefined;
  /** The handler runs once per claim; every later cancel awaits the same outcome. */
  outcome?: Promise<unknown>;
}

interface Waiting {
  /** Sent again once if the bus reconnects while it waits. */
  cancel: CancelMessage;
  resent: boolean;
  resolve(verdict: CancelVerdict): void;
}

export class ReplicaBus implements CancelBus {
  readonly replica: string;
  private readonly claims = new Map<string, LocalClaim>();
  private readonly waiting = new Map<string, Waiting>();
  /** Claims whose lease and early-cancel lookup are due in the next batch. */
  private readonly announcing = new Map<string, LocalClaim>();
  /** The announcing batch on its way (close waits for it: its leases carry the records). */
  private announced: Promise<void> = Promise.resolve();
  /** Cancels due in the next batch, and the promise of that batch's round trip. */
  private outgoing: { batch: CancelMessage[]; sent: Promise<void> } | undefined;
  private readonly confirmMs: number;
  private readonly rememberMs: number;
  private readonly leaseMs: number;
  private readonly operationMs: number;
  private readonly renewal: ReturnType<typeof setInterval>;
  private readonly sweeps = new Set<OrphanSweep>();
  /** Claims whose early-cancel lookup failed (a hung backend outlasting operationMs): the renewal looks again. */
  private readonly notLookedUp = new Set<string>();
  /** Released while the backend was down: their lease and record are dropped at the next renewal. */
  private readonly undropped = new Set<string>();
  private readonly sentAcks: SentAcks;
  /** Whether the backend is reachable now (the transport reports it). */
  connected = false;
  /** When the bus last (re)connected: a missing lease means "gone" only a lease period after it. */
  private connectedSince = 0;
  private closed = false;

  private constructor(private readonly transport: BusTransport, options: CancelBusOptions) {
    this.replica = options.replica ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.confirmMs = options.confirmMs ?? REPLICA_DEFAULTS.confirmMs;
    this.rememberMs = options.rememberMs ?? REPLICA_DEFAULTS.rememberMs;
    this.leaseMs = options.leaseMs ?? REPLICA_DEFAULTS.leaseMs;
    this.operationMs = options.operationMs ?? REPLICA_DEFAULTS.operationMs;
    this.sentAcks = new SentAcks(this.rememberMs);
    this.renewal = setInterval(() => void this.renewLeases(false), Math.max(10, Math.floor(this.leaseMs / 3)));
    this.renewal.unref();
  }

  /** A backend down at start does not fail it: cross-replica cancels reject until it is back. */
  static async start(transport: BusTransport, options: CancelBusOptions = {}): Promise<ReplicaBus> {
    const bus = new ReplicaBus(transport, options);
    try {
      await bounded(
        transport.connect((raw) => bus.receive(parseBusMessage(raw)), (connected) => bus.noteConnected(connected)),
        bus.operationMs * 5,
        () => new BusUnavailableError(transport.backend, "connect"),
      );
    } catch {
      // Not connected yet: the transport keeps trying and reports through onConnectedChange.
    }
    return bus;
  }

  claim(key: string, onCancel: CancelHandler, options: { record?: string } = {}): Claim {
    const claim: LocalClaim = { onCancel, record: options.record };
    this.claims.set(key, claim);
    this.announce(key, claim);
    return {
      release: () => {
        if (this.claims.get(key) !== claim) return;
        this.claims.delete(key);
        this.drop(key);
      },
    };
  }

  async cancel(key: string, options: CancelOptions = {}): Promise<CancelVerdict> {
    const reason = options.reason !== undefined ? { reason: options.reason } : {};
    const request: CancelRequest = { key, from: this.replica, ...reason };
    const local = this.claims.get(key);
    if (local !== undefined) {
      return { kind: "confirmed", replica: this.replica, local: true, detail: await this.runHandler(local, request) };
    }
    if (!this.connected) throw new BusUnavailableError(this.transport.backend, "cancel (not connected)");
    const id = randomUUID();
    // Remember first, then publish: an owner that claims between the two still finds it.
    const cancel: CancelMessage = { t: "cancel", id, key, from: this.replica, ...reason };
    const confirmed = new Promise<CancelVerdict>((resolve) => this.waiting.set(id, { cancel, resent: false, resolve }));
    try {
      await this.send(cancel);
    } catch (error) {
      this.waiting.delete(id);
      throw error;
    }
    const unconfirmed = () => new Error("not confirmed in time");
    const verdict = await bounded(confirmed, options.waitMs ?? this.confirmMs, unconfirmed).catch(() => undefined);
    this.waiting.delete(id);
    if (verdict !== undefined) return verdict;
    const { owner, recorded } = await this.op("owner", this.transport.holder(key));
    if (owner !== undefined) return { kind: "unconfirmed", owner };
    // A record outliving its lease: the owner died or closed its bus with the work running.
    const abandoned = recorded !== undefined ? { abandonedBy: recorded } : {};
    return { kind: "no-owner", settled: this.settled(), ...abandoned };
  }

  /** A missing lease means "owner gone" only after a whole lease period connected (cancels and sweeps). */
  private settled(): boolean {
    return this.connected && Date.now() - this.connectedSince >= this.leaseMs;
  }

  sweepOrphans(prefix: string, options: OrphanSweepOptions): { stop(): void } {
    if (this.closed) throw new Error("the cancel bus is closed: it cannot sweep");
    const sweep = new OrphanSweep(options, () => this.orphans(prefix), (orphan) => this.op("forget", this.transport.forget(orphan)));
    this.sweeps.add(sweep);
    return {
      stop: () => {
        sweep.stop();
        this.sweeps.delete(sweep);
      },
    };
  }

  private async orphans(prefix: string): Promise<OrphanedClaim[]> {
    if (!this.connected) throw new BusUnavailableError(this.transport.backend, "sweep (not connected)");
    if (!this.settled()) return []; // reconnected too recently to tell a dead owner from one renewing
    const found = await this.op("orphans", this.transport.orphans(prefix, ORPHANS_PER_SWEEP));
    // A key claimed here runs here, whatever its lease says.
    return found.filter((orphan) => !this.claims.has(orphan.key));
  }

  /** Cancels sent in the same turn of the event loop share one round trip (a burst is one statement). */
  private send(cancel: CancelMessage): Promise<void> {
    if (this.outgoing === undefined) {
      const batch: CancelMessage[] = [];
      const sent = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.outgoing = undefined;
        return this.op("publish", this.transport.rememberAndPublish(batch, this.rememberMs));
      });
      this.outgoing = { batch, sent };
    }
    this.outgoing.batch.push(cancel);
    return this.outgoing.sent;
  }

  /** Bounded by CLOSE_MS: with the backend hung, the connections are cut and close resolves. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewal);
    for (const sweep of this.sweeps) sweep.stop();
    this.sweeps.clear();
    for (const [id, waiting] of this.waiting) {
      this.waiting.delete(id);
      waiting.resolve({ kind: "no-owner", settled: false });
    }
    this.sentAcks.clear();
    await closeWithin(this.closeGracefully(), () => this.transport.destroy());
  }

  private async closeGracefully(): Promise<void> {
    // Claims made just before: written first, so the unlease below leaves their records behind.
    if (this.announcing.size > 0) this.announced = this.flushAnnounced();
    await this.announced;
    const keys = [...this.claims.keys()];
    this.claims.clear();
    this.notLookedUp.clear();
    if (this.connected) {
      // Work still claimed at close is abandoned: its record stays, so a sweep elsewhere finds it.
      await Promise.allSettled([
        ...keys.map((key) => this.op("unlease", this.transport.unlease(key, this.replica, false))),
        ...[...this.undropped].map((key) => this.op("unlease", this.transport.unlease(key, this.replica, true))),
      ]);
    }
    await this.transport.close().catch(() => undefined);
  }

  /** Leases a new claim, then looks for an early cancel; claims of one event-loop turn share both round trips. */
  private announce(key: string, claim: LocalClaim): void {
    if (!this.connected) return; // leased on the next renewal after reconnecting
    this.announcing.set(key, claim);
    if (this.announcing.size === 1) {
      setImmediate(() => {
        if (this.announcing.size > 0) this.announced = this.flushAnnounced();
      });
    }
  }

  private flushAnnounced(): Promise<void> {
    const batch = [...this.announcing.entries()];
    this.announcing.clear();
    return this.leaseClaims(batch, true);
  }

  /** Leases `batch` and, with `lookUp`, runs the claims' remembered cancels; never rejects. */
  private async leaseClaims(batch: readonly (readonly [string, LocalClaim])[], lookUp: boolean): Promise<void> {
    try {
      await this.op("lease", this.transport.lease(batch.map(([key, { record }]) => ({ key, record })), this.replica, this.leaseMs));
      // Released meanwhile: the write may have brought lease and record back, and a record outliving
      // its lease would have a sweep end work judged abandoned.
      const released = batch.filter(([key]) => !this.claims.has(key));
      await Promise.all(released.map(([key]) => this.op("unlease", this.transport.unlease(key, this.replica, true))));
      if (lookUp) await this.answerRemembered(batch);
      if (lookUp) for (const [key] of batch) this.notLookedUp.delete(key);
    } catch {
      // The backend went away or hung: the renewal re-leases, and looks up what this lookup missed.
      if (lookUp) for (const [key] of batch) if (this.claims.has(key)) this.notLookedUp.add(key);
    }
  }

  private async answerRemembered(batch: readonly (readonly [string, LocalClaim])[]): Promise<void> {
    const live = batch.filter(([key, claim]) => this.claims.get(key) === claim && claim.outcome === undefined);
    if (live.length === 0) return;
    const early = await this.op("remembered", this.transport.remembered(live.map(([key]) => key)));
    for (const [key, claim] of live) {
      const cancel = early.get(key);
      if (cancel !== undefined && this.claims.get(key) === claim) void this.answer(claim, cancel);
    }
  }

  /** Undefined: not a bus message (another writer on the channel). */
  private receive(message: BusMessage | undefined): void {
    if (message === undefined) return;
    if (message.t === "ack") {
      if (message.to !== this.replica) return;
      const waiting = this.waiting.get(message.id);
      if (waiting === undefined) return;
      this.waiting.delete(message.id);
      waiting.resolve({ kind: "confirmed", replica: message.from, local: false, detail: message.detail });
      return;
    }
    if (message.from === this.replica) return;
    const claim = this.claims.get(message.key);
    if (claim !== undefined) {
      void this.answer(claim, message);
      return;
    }
    // A cancel sent again after a reconnect, answered already (the work may have ended since).
    const sent = this.sentAcks.get(message.id);
    if (sent !== undefined) void this.op("publish", this.transport.publish(sent)).catch(() => undefined);
  }

  /** Runs the owner's handler for a cancel from another replica and confirms it to that replica. */
  private async answer(claim: LocalClaim, message: CancelMessage): Promise<void> {
    const reason = message.reason !== undefined ? { reason: message.reason } : {};
    const request: CancelRequest = { key: message.key, from: message.from, ...reason };
    let detail: unknown;
    try {
      detail = await this.runHandler(claim, request);
    } catch (error) {
      detail = { error: errorMessage(error) };
    }
    if (message.from === this.replica || this.closed) return;
    const ack = { t: "ack", id: message.id, key: message.key, to: message.from, from: this.replica, detail: detail ?? null } as const;
    this.sentAcks.add(ack);
    await this.op("publish", this.transport.publish(ack)).catch(() => undefined);
  }

  private runHandler(claim: LocalClaim, request: CancelRequest): Promise<unknown> {
    claim.outcome ??= Promise.resolve().then(() => claim.onCancel(request));
    return claim.outcome;
  }

  private noteConnected(connected: boolean): void {
    if (connected && !this.connected) {
      this.connectedSince = Date.now();
      this.connected = true;
      void this.renewLeases(true);
      void this.resendAfterReconnect();
      return;
    }
    this.connected = connected;
  }

  /** A backend restart may have lost a cancel waited on or a confirmation sent: each is sent once more. */
  private async resendAfterReconnect(): Promise<void> {
    const resend = [...this.waiting.values()].filter((waiting) => !waiting.resent);
    for (const waiting of resend) waiting.resent = true;
    const acks = this.sentAcks.since(this.confirmMs);
    await Promise.allSettled([
      ...resend.map((waiting) => this.send(waiting.cancel)),
      ...acks.map((ack) => this.op("publish", this.transport.publish(ack))),
    ]);
  }

  /** The work of `key` ended: drop its lease and record now, or at the next renewal if the backend cannot be reached. */
  private drop(key: string): void {
    this.undropped.delete(key);
    if (!this.connected) {
      this.undropped.add(key);
      return;
    }
    this.op("unlease", this.transport.unlease(key, this.replica, true)).catch(() => {
      if (!this.claims.has(key) && !this.closed) this.undropped.add(key);
    });
  }

  private async renewLeases(reconnected: boolean): Promise<void> {
    if (!this.connected) return;
    // A record left behind would have a sweep judge ended work abandoned (the task's final state protects it, too).
    for (const key of this.undropped) {
      if (this.claims.has(key)) this.undropped.delete(key); // claimed again: the new claim rewrote both
      else this.drop(key);
    }
    // A cancel remembered while this replica could not hear (backend restart) still reaches its claim.
    for (const key of this.notLookedUp) if (!this.claims.has(key)) this.notLookedUp.delete(key);
    if (this.claims.size > 0) await this.leaseClaims([...this.claims.entries()], reconnected || this.notLookedUp.size > 0);
  }

  private op<T>(operation: string, promise: Promise<T>): Promise<T> {
    return bounded(promise, this.operationMs, () => new BusUnavailableError(this.transport.backend, operation));
  }
}
