/** What a member of a group can be asked to write now. */
export interface Flushable {
  flushQueued(): void;
}

/** The endpoints of one relay: what a chunk read by any member produced leaves when it is handled, as a byte relay's. */
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
