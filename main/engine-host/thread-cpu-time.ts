// CPU time of the calling thread (clock_gettime(CLOCK_THREAD_CPUTIME_ID) through koffi): what a
// thread spent working, without the time the scheduler gave the cores to others. The worker
// reports it per pass, so a benchmark on a shared machine can weigh the engine thread's share of
// a capture by the work it did rather than by wall time. Linux and macOS; elsewhere null.
import koffi from 'koffi';

type NativeFunction = (...args: unknown[]) => unknown;

const CLOCK_THREAD_CPUTIME_ID: Partial<Record<NodeJS.Platform, number>> = { linux: 3, darwin: 16 };

let reader: (() => number) | null | undefined;

/** This thread's CPU time in ms, or null where it cannot be read. */
export function threadCpuMs(): number | null {
  if (reader === undefined) reader = makeReader();
  return reader === null ? null : reader();
}

function makeReader(): (() => number) | null {
  const clock = CLOCK_THREAD_CPUTIME_ID[process.platform];
  if (clock === undefined) return null;
  try {
    const clockGettime = koffi.load(null).func('int clock_gettime(int clock, void *ts)') as NativeFunction;
    // struct timespec on 64-bit Linux and macOS: two 64-bit fields, seconds and nanoseconds.
    const timespec = new BigInt64Array(2);
    const read = (): number => {
      if (clockGettime(clock, timespec) !== 0) throw new Error('clock_gettime failed');
      return Number(timespec[0]) * 1000 + Number(timespec[1]) / 1e6;
    };
    read();
    return read;
  } catch {
    return null;
  }
}
