// This process's open file descriptors on files inside a folder, read from Linux's /proc: what
// the tests of closing bundles count (a descriptor left open is closed only by the garbage
// collector, which Node warns of and will make an error).
import { readdirSync, readlinkSync } from 'node:fs';

export function descriptorsUnder(dir: string): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(`${dir}/`) ? [target] : [];
    } catch {
      return []; // closed while listed (the listing's own descriptor)
    }
  });
}
