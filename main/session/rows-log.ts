// The rows' version history since the last change that was not a pure append, so getRows can send
// a client only the rows it lacks. A step judges one new pass whose rows go after every row there
// is (execution order is pass order), and no earlier row changes: an append. Anything else — an
// oracle switch, a reset, opening a bundle, engine or run, a pass judged again — is a full
// change, and a client holding a version from before it must take every row again.
import { randomInt } from 'node:crypto';

export type RowsChange = 'append' | 'full';

export class RowsLog {
  private latest: number;
  /** The version of the last full change; every version after it was an append. */
  private fullAt: number;
  /** countAt[v - fullAt]: how many rows there were at version v (v from fullAt to latest). */
  private countAt: number[] = [0];

  /**
   * `first`: the version before any change. A session starts at a random one so that a version a
   * client kept from another session (a restarted serve-mode core) is unknown here, not mistaken
   * for one of ours.
   */
  constructor(first: number = randomInt(0, 2 ** 40)) {
    this.latest = first;
    this.fullAt = first;
  }

  get version(): number {
    return this.latest;
  }

  /**
   * Records a change that left `rowCount` rows. An "append" that shrank the rows is recorded as
   * full. A full change from no rows is an append: every client since the last full change holds
   * the empty list (counts only grow between full changes), a prefix of any rows (so a prefill
   * after the clear that starts it appends).
   */
  record(change: RowsChange, rowCount: number): void {
    this.latest += 1;
    const previous = this.countAt[this.countAt.length - 1] ?? 0;
    if ((change === 'append' && rowCount >= previous) || previous === 0) {
      this.countAt.push(rowCount);
      return;
    }
    this.fullAt = this.latest;
    this.countAt = [rowCount];
  }

  /**
   * For a client holding version `since`: the index of the first row it lacks, when every change
   * after `since` was an append; null when it needs every row (no version, one before the last
   * full change, or one this log never issued).
   */
  appendedFrom(since: number | undefined): number | null {
    if (since === undefined || since < this.fullAt || since > this.latest) return null;
    return this.countAt[since - this.fullAt] ?? null;
  }
}
