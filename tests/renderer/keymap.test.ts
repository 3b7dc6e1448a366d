// The one table of global shortcuts: the key handler dispatches from it and the "?" overlay lists
// it, and none of its keys may collide with another command or with the menu's accelerators.
import { describe, expect, it } from 'vitest';
import { KEYMAP, keyLabel, keysFor } from '../../renderer/src/keyboard/keymap.ts';

describe('KEYMAP', () => {
  it('binds each key to one command and each command once', () => {
    const keys = KEYMAP.flatMap((binding) => binding.keys);
    expect(new Set(keys).size).toBe(keys.length);
    const commands = KEYMAP.map((binding) => binding.command);
    expect(new Set(commands).size).toBe(commands.length);
    expect(KEYMAP.every((binding) => binding.keys.length > 0 && binding.label.length > 0)).toBe(true);
  });

  it('uses plain keys only: modified keys belong to the menu (CmdOrCtrl+O...) and the browser', () => {
    for (const binding of KEYMAP) for (const key of binding.keys) expect(key).not.toMatch(/\+|Control|Meta|Alt/);
  });

  it('writes keys the way the overlay shows them', () => {
    expect(keyLabel('ArrowRight')).toBe('→');
    expect(keyLabel('Escape')).toBe('Esc');
    expect(keyLabel('n')).toBe('n');
    expect(keysFor('step')).toBe('n / →');
    expect(keysFor('focusFilter')).toBe('f / /');
    expect(keysFor('panel4')).toBe('4');
  });
});
