// Failures are data, never exceptions thrown into React: a failed call becomes an entry in the
// error list (local to this renderer), and the core's own errors are dismissed through the core.
import { setState } from '../inspector-store.ts';

let nextLocalErrorId = 1;

export function pushLocalError(action: string, message: string): void {
  const entry = { id: nextLocalErrorId++, at: new Date().toISOString(), action, message };
  // Keep the list bounded: a reconnect loop must not grow it without end.
  setState((state) => ({ localErrors: [...state.localErrors.slice(-49), entry] }));
}

export function dismissLocalError(id: number): void {
  setState((state) => ({ localErrors: state.localErrors.filter((entry) => entry.id !== id) }));
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
