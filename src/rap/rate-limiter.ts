/** A token bucket per client: `burst` notices at once, refilled at `perSecond`. */
export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

/** Clients remembered at once, least recently seen forgotten first. */
const MAX_CLIENTS = 10_000;

/** Why these: docs/decisions.md, "Why the RAP defaults are what they are". */
export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 100, burst: 200 };
export const DEFAULT_FLOOD_LIMIT: RateLimit = { perSecond: 1000, burst: 2000 };

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly limit: RateLimit) {
    if (!(limit.perSecond > 0) || !(limit.burst >= 1)) throw new RangeError("rate limit needs perSecond > 0 and burst >= 1");
  }

  take(client: string): boolean {
    const now = performance.now();
    const { burst, perSecond } = this.limit;
    const bucket = this.buckets.get(client) ?? { tokens: burst, at: now };
    // Re-inserting keeps the Map in least-recently-seen order; a new client past the cap pushes out the oldest.
    this.buckets.delete(client);
    if (this.buckets.size >= MAX_CLIENTS) this.buckets.delete(this.buckets.keys().next().value as string);
    this.buckets.set(client, bucket);
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Whole seconds until `client` has a token again (for Retry-After). */
  retryAfter(client: string): number {
    const bucket = this.buckets.get(client);
    if (bucket === undefined || bucket.tokens >= 1) return 0;
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit.perSecond));
  }
}
