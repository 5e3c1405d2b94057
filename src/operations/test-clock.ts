/**
 * The test clock of a test-mode application (an extension, issue 40 item 8; docs/testing-agents.md). HTTP-only: a
 * test suite moves time, not the agent under test.
 */
import type { Core } from '../core-types.js';
import { advanceTestClock, notTestMode } from '../background/index.js';
import { invalid } from '../errors.js';
import {
  AdvancedTestClockSchema,
  AdvanceTestClockInputSchema,
  GetTestClockInputSchema,
  TestClockSchema,
  type AdvanceTestClockInput,
  type TestClock,
} from '../schemas/test-clock.js';
import { defineOperation, runOperation } from './define-operation.js';
import { sendMessage } from './outbound.js';

/** The wire form of a test clock standing at `at` (unix ms). */
function clockOf(applicationId: string, at: number): TestClock {
  return {
    object: 'test_clock',
    application_id: applicationId,
    test_mode: true,
    now: Math.floor(at / 1000),
    now_iso: new Date(at).toISOString(),
  };
}

export const getTestClock = defineOperation({
  name: 'get_test_clock',
  title: 'Read the test clock',
  description: "A test-mode application's virtual time (400 for a production application, which runs on real time).",
  input: GetTestClockInputSchema,
  output: TestClockSchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'GET', path: '/test-clock' },
  tool: false,
  run: async (core, _input, { principal }) => {
    const at = await core.accounts.applications.testClockOf(principal.applicationId);
    if (at === undefined) throw notTestMode();
    return clockOf(principal.applicationId, at);
  },
});

/** The target of an advance (unix ms) from `{seconds}` or `{to}`, as of the clock's time `from`. */
async function targetOf(core: Core, applicationId: string, input: AdvanceTestClockInput) {
  if ((input.seconds === undefined) === (input.to === undefined))
    throw invalid('seconds', 'give exactly one of seconds (how far forward) and to (the time to move the clock to).');
  const from = await core.accounts.applications.testClockOf(applicationId);
  if (from === undefined) throw notTestMode();
  if (input.seconds !== undefined) return from + input.seconds * 1000;
  return typeof input.to === 'number' ? input.to * 1000 : Date.parse(input.to!);
}

export const advanceTestClockOperation = defineOperation({
  name: 'advance_test_clock',
  title: 'Advance the test clock',
  description:
    "Moves a test-mode application's clock forward ({seconds} or {to}; never backwards) and runs, in order of due time and before answering, what fell due: scheduled sends, follow-ups, hold expiries, retention.",
  input: AdvanceTestClockInputSchema,
  output: AdvancedTestClockSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/test-clock/advance' },
  tool: false,
  run: async (core, input, { principal }) => {
    const { applicationId } = principal;
    const target = await targetOf(core, applicationId, input);
    // Follow-ups go out as any send: send_message through the operation runner, with the face `worker`.
    const advanced = await advanceTestClock(core, applicationId, target, (sendInput, context) =>
      runOperation(sendMessage, core, sendInput, context),
    );
    return { ...clockOf(applicationId, advanced.to), previous: Math.floor(advanced.from / 1000), ran: advanced.ran };
  },
});
