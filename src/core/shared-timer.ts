import { checkTimerMs } from "./timer-limit.js";

/** One unref'd timer shared by equal-length periods: armed for the first to end, re-armed by its owner. */
export class SharedTimer {
  private handle: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(private readonly onFire: () => void) {}

  get armed(): boolean {
    return this.handle !== undefined;
  }

  arm(ms: number): void {
    checkTimerMs(Math.max(0, ms), "a timer delay");
    this.handle = setTimeout(this.fired, Math.max(0, ms));
    this.handle.unref?.();
  }

  clear(): void {
    clearTimeout(this.handle);
    this.handle = undefined;
  }

  private readonly fired = () => {
    this.handle = undefined;
    this.onFire();
  };
}
