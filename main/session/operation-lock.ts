// One engine operation at a time. The engine host runs one call at a time anyway, but an
// operation is several calls (start the host, open, set inputs, inject, run a pass, judge it):
// interleaving two of them would capture into the wrong bundle or judge half a pass. So a second
// operation is refused at once with E_BUSY rather than queued behind a run that may take minutes;
// getters never take the lock.
import { CALL_CODES, callError } from './session-errors.ts';

export class OperationLock {
  private current: string | null = null;

  /** The name of the running operation ("prefill", "run to end"...), or null. */
  get busy(): string | null {
    return this.current;
  }

  /** Runs `operation` under the lock; rejects with E_BUSY when another one holds it. */
  async run<T>(name: string, operation: () => Promise<T>): Promise<T> {
    if (this.current !== null) {
      throw callError(CALL_CODES.busy, `cannot start "${name}": "${this.current}" is still running; wait for it to finish (getters keep working meanwhile)`);
    }
    this.current = name;
    try {
      return await operation();
    } finally {
      this.current = null;
    }
  }
}
