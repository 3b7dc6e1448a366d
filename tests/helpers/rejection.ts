// The error a promise rejects with, checked to be of the class a test expects: the test fails
// when the promise resolves, or rejects with anything else. One helper for the tests that feed
// a bundle, a comparison or a capture a deliberate error and then read its code, file and field.
import { expect } from 'vitest';

export async function rejectionOf<T>(promise: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(type);
  return error as T;
}
