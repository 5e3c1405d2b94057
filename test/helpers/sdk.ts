/** Assertions on calls made with the nylas SDK. */
import { NylasApiError } from 'nylas';
import { expect } from 'vitest';

/** Awaits a call that must fail with a NylasApiError (a Nylas error envelope) and returns that error. */
export async function sdkError(call: Promise<unknown>): Promise<NylasApiError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(NylasApiError);
  return error as NylasApiError;
}
