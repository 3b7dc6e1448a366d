// One keydown listener for the whole window. Keys typed into inputs belong to the input (only
// Escape leaves it); modified keys belong to the browser / OS.
import { useEffect } from 'react';
import { runCommand } from './command-registry.ts';
import { KEYMAP } from './keymap.ts';

function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) {
    // Buttons-like inputs do not take text; shortcuts keep working after clicking them.
    return !['checkbox', 'radio', 'button', 'submit', 'range', 'file', 'reset'].includes(target.type);
  }
  return false;
}

export function useGlobalShortcuts(): void {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent): void => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      if (isTypingTarget(event.target)) {
        if (event.key === 'Escape' && event.target instanceof HTMLElement) event.target.blur();
        return;
      }
      const binding = KEYMAP.find((entry) => entry.keys.includes(event.key));
      if (binding === undefined) return;
      if (runCommand(binding.command)) event.preventDefault();
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);
}
