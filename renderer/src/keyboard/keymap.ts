// Every global keyboard shortcut in one table: the key handler dispatches from it and the "?"
// overlay lists it, so the two cannot drift apart. (PgUp / PgDn are the focused table's own keys,
// handled in BoundaryTable.tsx, and are not listed here.)
export type CommandName =
  | 'prefill'
  | 'step'
  | 'runToEnd'
  | 'runToDivergence'
  | 'reset'
  | 'selectNext'
  | 'selectPrevious'
  | 'focusFilter'
  | 'jumpFirstDivergence'
  | 'panel1'
  | 'panel2'
  | 'panel3'
  | 'panel4'
  | 'panel5'
  | 'panel6'
  | 'elementPrevious'
  | 'elementNext'
  | 'toggleHelp'
  | 'escape';

export interface KeyBinding {
  command: CommandName;
  /** KeyboardEvent.key values. */
  keys: readonly string[];
  label: string;
  group: 'Run' | 'Navigate' | 'Panels' | 'Help';
}

export const KEYMAP: readonly KeyBinding[] = [
  { command: 'prefill', keys: ['p'], label: 'Prefill', group: 'Run' },
  { command: 'step', keys: ['n', 'ArrowRight'], label: 'Step one decode pass', group: 'Run' },
  { command: 'runToEnd', keys: ['e'], label: 'Run to end', group: 'Run' },
  { command: 'runToDivergence', keys: ['d'], label: 'Run to first divergence', group: 'Run' },
  { command: 'reset', keys: ['r'], label: 'Reset the run', group: 'Run' },
  { command: 'selectNext', keys: ['j', 'ArrowDown'], label: 'Next boundary row', group: 'Navigate' },
  { command: 'selectPrevious', keys: ['k', 'ArrowUp'], label: 'Previous boundary row', group: 'Navigate' },
  { command: 'jumpFirstDivergence', keys: ['g'], label: 'Jump to the first divergence', group: 'Navigate' },
  { command: 'focusFilter', keys: ['f', '/'], label: 'Focus the table filter', group: 'Navigate' },
  { command: 'elementPrevious', keys: ['['], label: 'Previous element (bit inspector)', group: 'Navigate' },
  { command: 'elementNext', keys: [']'], label: 'Next element (bit inspector)', group: 'Navigate' },
  { command: 'panel1', keys: ['1'], label: 'Tensor view', group: 'Panels' },
  { command: 'panel2', keys: ['2'], label: 'Special values', group: 'Panels' },
  { command: 'panel3', keys: ['3'], label: 'Layer isolation', group: 'Panels' },
  { command: 'panel4', keys: ['4'], label: 'Audio', group: 'Panels' },
  { command: 'panel5', keys: ['5'], label: 'Provenance', group: 'Panels' },
  { command: 'panel6', keys: ['6'], label: 'Receipt', group: 'Panels' },
  { command: 'toggleHelp', keys: ['?'], label: 'Show / hide shortcuts', group: 'Help' },
  { command: 'escape', keys: ['Escape'], label: 'Close overlay, leave an input', group: 'Help' },
];

/** How a key is written in the UI. */
export function keyLabel(key: string): string {
  const names: Record<string, string> = { ArrowRight: '→', ArrowLeft: '←', ArrowUp: '↑', ArrowDown: '↓', Escape: 'Esc' };
  return names[key] ?? key;
}

export function keysFor(command: CommandName): string {
  const binding = KEYMAP.find((entry) => entry.command === command);
  return binding === undefined ? '' : binding.keys.map(keyLabel).join(' / ');
}
