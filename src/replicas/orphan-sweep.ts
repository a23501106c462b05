/** The periodic sweep for claims whose owner died: never two at once, every failure reported, none thrown. */
import { asError } from "../core/error-message.js";
import { guarded } from "../core/report-errors.js";
import { MAX_TIMER_MS } from "../core/timer-limit.js";
import type { OrphanedClaim, OrphanSweepOptions } from "./cancel-bus.js";

const MIN_SWEEP_MS = 10;

export class OrphanSweep {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  /** `find` lists the orphans (throws when the backend cannot answer); `forget` drops one once handled. */
  constructor(
    private readonly options: OrphanSweepOptions,
    private readonly find: () => Promise<OrphanedClaim[]>,
    private readonly forget: (orphan: OrphanedClaim) => Promise<void>,
  ) {
    const { everyMs } = options;
    if (!Number.isInteger(everyMs) || everyMs < MIN_SWEEP_MS || everyMs > MAX_TIMER_MS) {
      throw new RangeError(`everyMs must be an integer number of ms from ${MIN_SWEEP_MS} to ${MAX_TIMER_MS}, got ${String(everyMs)}`);
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.sweep().finally(() => this.schedule()), this.options.everyMs);
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    let orphans: OrphanedClaim[];
    try {
      orphans = await this.find();
    } catch (error) {
      this.report(error);
      return;
    }
    for (const orphan of orphans) {
      if (this.stopped) return;
      try {
        await this.options.onOrphan(orphan);
        await this.forget(orphan);
      } catch (error) {
        this.report(error, orphan);
      }
    }
  }

  private report(error: unknown, orphan?: OrphanedClaim): void {
    if (this.stopped) return;
    // A throwing error callback must not end the sweeps (nor reach the event loop).
    guarded(() => this.options.onError(asError(error), orphan), []);
  }
}
