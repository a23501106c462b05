/**
 * The confirmations an owner sent lately, by cancel id: sent again after a backend restart, and
 * answering a cancel sent again (docs/decisions.md, "Scale-out: a backend restart mid-cancel").
 */
import type { BusMessage } from "./transport.js";

type Ack = Extract<BusMessage, { t: "ack" }>;

/** At most this many are kept (oldest forgotten first): a burst of 1,000 cancels fits many times. */
const CAPACITY = 10_000;

export class SentAcks {
  /** Oldest first. */
  private readonly acks = new Map<string, { ack: Ack; at: number }>();

  constructor(private readonly keepMs: number) {}

  add(ack: Ack): void {
    const now = Date.now();
    this.acks.delete(ack.id);
    this.acks.set(ack.id, { ack, at: now });
    for (const [id, { at }] of this.acks) {
      if (now - at < this.keepMs && this.acks.size <= CAPACITY) break;
      this.acks.delete(id);
    }
  }

  get(id: string): Ack | undefined {
    const sent = this.acks.get(id);
    return sent !== undefined && Date.now() - sent.at < this.keepMs ? sent.ack : undefined;
  }

  since(ms: number): Ack[] {
    const after = Date.now() - ms;
    return [...this.acks.values()].filter(({ at }) => at >= after).map(({ ack }) => ack);
  }

  clear(): void {
    this.acks.clear();
  }
}
