// Makes a FIFO with mkfifo(1) (node has no mkfifo); false where the tool is missing.
import { spawnSync } from 'node:child_process';

export function mkfifoSync(path: string): boolean {
  return spawnSync('mkfifo', [path]).status === 0;
}
