// Child process of the comparator benchmark: compares one boundary of two bundles (streaming) and
// prints {"maxRssBytes", "source", "seconds", "passed", ...} as JSON, so the parent measures the
// peak resident memory of the comparison alone.
//   node --import tsx tests/bench/comparator-rss-child.ts <native dir> <reference dir> <boundary>
// The peak is VmHWM of /proc/self/status (the high-water mark of this program's own address
// space) where available: getrusage's ru_maxrss survives execve on Linux, so a child forked from a
// parent holding a GB would report the parent's size.
import { readFileSync } from 'node:fs';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';

const [nativeDir, referenceDir, name] = process.argv.slice(2);
if (nativeDir === undefined || referenceDir === undefined || name === undefined) {
  process.stderr.write('usage: comparator-rss-child.ts <native dir> <reference dir> <boundary>\n');
  process.exit(2);
}
const native = await openBundle(nativeDir, { verify: 'none' });
const reference = await openBundle(referenceDir, { verify: 'none' });
const started = performance.now();
const result = await compareBoundary({ native, reference }, 0, name);
const seconds = (performance.now() - started) / 1000;
await native.close();
await reference.close();
function peakRss(): { maxRssBytes: number; source: string } {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match !== null) return { maxRssBytes: Number(match[1]) * 1024, source: 'VmHWM' };
  } catch {
    // not Linux
  }
  return { maxRssBytes: process.resourceUsage().maxRSS * 1024, source: 'ru_maxrss' };
}

process.stdout.write(`${JSON.stringify({ ...peakRss(), seconds, passed: result.passed, elements: result.elements, mismatches: result.mismatches })}\n`);
