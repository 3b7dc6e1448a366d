// The C engine helper (engine/helpers/ti_helper.c) under AddressSanitizer + UBSan: the driver
// engine/tests/helper_driver.c calls every ABI function of an engine built on it
// (engine/tests/helper_test_engine.c) and checks the catalogue JSON, the dtype / shape / option
// refusals with their statuses and messages, the wanted filter, injection (own value recorded,
// injected value flows on, pass-dependent extents checked, cleared when the pass ends), strided
// records, abort and reset. Any failed check or sanitizer report fails the test.
import { beforeAll, describe, it } from 'vitest';
import { buildSanitizerDriver, expectSanitizerDriverClean } from '../helpers/sanitizer-driver.ts';

beforeAll(() => buildSanitizerDriver('helper_driver'), 120_000);

describe('the C engine helper under ASan + UBSan', () => {
  it('passes every check of the driver without a sanitizer report', () => {
    expectSanitizerDriverClean('helper_driver', 'helper-driver', 49);
  });
});
