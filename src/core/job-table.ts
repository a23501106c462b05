import type { Job } from "./job.js";

const EMPTY = -1;
const INITIAL_SLOTS = 64;
/** 2^18 slots (3 MB at most) hold 100,000+ sequential ids in flight without a collision. */
const MAX_SLOTS = 1 << 18;

/** A key the slot index can hold: a small non-negative integer. */
function isSlotKey(key: unknown): key is number {
  return typeof key === "number" && (key | 0) === key && key >= 0;
}

/**
 * Jobs in flight by their issuer's id. Integer key k lives in slot k mod length or the slot half the array
 * away (one or two reads); any other key, or one whose slots are taken, in a Map. Kept by the 3% rule
 * (docs/decisions.md, "Optimisations kept and dropped").
 */
export class JobTable<K, P> {
  private slotKeys = new Int32Array(INITIAL_SLOTS).fill(EMPTY);
  private slotJobs: (Job<P> | undefined)[] = new Array<Job<P> | undefined>(INITIAL_SLOTS).fill(undefined);
  private mask = INITIAL_SLOTS - 1;
  private slotted = 0;
  private readonly others = new Map<K, Job<P>>();

  get size(): number {
    return this.slotted + this.others.size;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  get(key: K): Job<P> | undefined {
    if (isSlotKey(key)) {
      const slot = this.slotOf(key);
      if (slot !== -1) return this.slotJobs[slot];
    }
    return this.others.size === 0 ? undefined : this.others.get(key);
  }

  /** The slot holding `key`, or -1. */
  private slotOf(key: number): number {
    const slot = key & this.mask;
    if (this.slotKeys[slot] === key) return slot;
    const other = slot ^ ((this.mask + 1) >>> 1);
    return this.slotKeys[other] === key ? other : -1;
  }

  /** The in-flight jobs: slotted ones in slot order, then the others in insertion order. */
  values(): IterableIterator<Job<P>> {
    return this.collect(() => true).values();
  }

  /** The running jobs that pass `test`, in the order of `values()`, copying only what it finds. */
  selectRunning(test: (job: Job<P>) => boolean): Job<P>[] {
    return this.collect((job) => job.state === "running" && test(job));
  }

  private collect(test: (job: Job<P>) => boolean): Job<P>[] {
    const found: Job<P>[] = [];
    if (this.slotted > 0) for (const job of this.slotJobs) if (job !== undefined && test(job)) found.push(job);
    for (const job of this.others.values()) if (test(job)) found.push(job);
    return found;
  }

  /** Puts `job` under `key`, which the caller has found not in flight. */
  insert(key: K, job: Job<P>): void {
    if (!isSlotKey(key) || !this.slot(key, job)) this.others.set(key, job);
  }

  /** Removes the job under `key`; undefined if none was in flight. */
  delete(key: K): Job<P> | undefined {
    const slot = isSlotKey(key) ? this.slotOf(key) : -1;
    if (slot === -1) {
      const job = this.others.get(key);
      this.others.delete(key);
      return job;
    }
    const job = this.slotJobs[slot];
    this.slotKeys[slot] = EMPTY;
    this.slotJobs[slot] = undefined;
    if (--this.slotted === 0 && this.mask + 1 > INITIAL_SLOTS) this.resetSlots(INITIAL_SLOTS);
    return job;
  }

  /** Puts `job` in its key's slot; false when the slot is taken and the array cannot grow. */
  private slot(key: number, job: Job<P>): boolean {
    for (;;) {
      let slot = key & this.mask;
      if (this.slotKeys[slot] !== EMPTY) slot ^= (this.mask + 1) >>> 1;
      if (this.slotKeys[slot] === EMPTY) {
        this.slotKeys[slot] = key;
        this.slotJobs[slot] = job;
        this.slotted++;
        return true;
      }
      // A collision in a sparse array is an outlier (a long-lived request): the Map takes it.
      const length = this.mask + 1;
      if (length >= MAX_SLOTS || this.slotted < length / 4) return false;
      this.grow(length * 2);
    }
  }

  private grow(length: number): void {
    const keys = this.slotKeys;
    const jobs = this.slotJobs;
    this.resetSlots(length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as number;
      if (key !== EMPTY && !this.slot(key, jobs[i] as Job<P>)) this.others.set(key as K, jobs[i] as Job<P>);
    }
  }

  private resetSlots(length: number): void {
    this.slotKeys = new Int32Array(length).fill(EMPTY);
    this.slotJobs = new Array<Job<P> | undefined>(length).fill(undefined);
    this.mask = length - 1;
    this.slotted = 0;
  }
}
