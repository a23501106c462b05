/** What a member of a group can be asked to write now. */
export interface Flushable {
  flushQueued(): void;
}

/**
 * The endpoints of one relay. A byte relay writes each chunk it reads at once; so does the
 * bridge: what a chunk read by any member produced (on any member's output) is written as
 * soon as that chunk is handled. While a chunk is being handled, a member need not schedule
 * a write of its own for later: the group's flush at the chunk's end covers it.
 */
export class FlushGroup {
  private readonly members = new Set<Flushable>();
  private handling = false;

  add(member: Flushable): void {
    this.members.add(member);
  }

  delete(member: Flushable): void {
    this.members.delete(member);
  }

  /** Whether what is queued now will be written when the current chunk is handled. */
  get flushesSoon(): boolean {
    return this.handling;
  }

  /** A chunk's lines are being handled: their writes wait for `chunkEnd`. */
  chunkStart(): void {
    this.handling = true;
  }

  /** The chunk is handled: everything it produced leaves now. */
  chunkEnd(): void {
    if (!this.handling) return;
    this.handling = false;
    for (const member of this.members) member.flushQueued();
  }
}
