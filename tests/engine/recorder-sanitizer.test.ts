// The engine host's C recorder (engine/host-recorder/ti_recorder.c) under AddressSanitizer +
// UBSan: the driver engine/tests/recorder_driver.c plays the host (a 1 KiB ring it drains when
// the recorder asks for room, a fallback that counts the records handed over) and checks the
// frames of row-major and strided records across wraps, the crumb, the counters, the record
// window, and that every contract violation is handed over with nothing written. Any failed check
// or sanitizer report fails the test.
import { beforeAll, describe, it } from 'vitest';
import { buildSanitizerDriver, expectSanitizerDriverClean } from '../helpers/sanitizer-driver.ts';

beforeAll(() => buildSanitizerDriver('recorder_driver'), 120_000);

describe('the C recorder under ASan + UBSan', () => {
  it('passes every check of the driver without a sanitizer report', () => {
    expectSanitizerDriverClean('recorder_driver', 'recorder-driver', 200);
  });
});
