// Components own the commands that need their state (the table knows its visible row order);
// they register a handler while mounted, and the key handler runs whatever is registered.
import { useEffect, useRef } from 'react';
import type { CommandName } from './keymap.ts';

const handlers = new Map<CommandName, () => void>();

export function runCommand(command: CommandName): boolean {
  const handler = handlers.get(command);
  if (handler === undefined) return false;
  handler();
  return true;
}

/** Registers `handler` for `command` while the calling component is mounted (latest closure wins). */
export function useCommand(command: CommandName, handler: () => void): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    const run = (): void => latest.current();
    handlers.set(command, run);
    return () => {
      if (handlers.get(command) === run) handlers.delete(command);
    };
  }, [command]);
}
