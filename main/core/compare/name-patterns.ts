// Boundary-name patterns of the contracts file and the map file (docs/compare.md):
//
//   *        any run of characters, dots included, possibly empty
//   {name}   a capture: a non-empty run of characters without a dot ("layers.{i}.out")
//   anything else matches itself
//
// A map target ("nam.a0.l{i}.out") may use the captures of its source pattern and nothing else,
// so every candidate name maps to exactly one reference name.

export interface NamePattern {
  readonly source: string;
  readonly captures: readonly string[];
  readonly regex: RegExp;
}

const CAPTURE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function escapeRegex(text: string): string {
  return text.replace(/[.+?^$()[\]\\|]/g, '\\$&');
}

/** Compiles a pattern; a string result says what is wrong with it. */
export function compileNamePattern(source: string): NamePattern | string {
  if (source.length === 0) return 'a pattern is a non-empty string';
  let regex = '';
  const captures: string[] = [];
  for (let at = 0; at < source.length;) {
    const char = source[at] as string;
    if (char === '*') {
      regex += '.*';
      at += 1;
    } else if (char === '{') {
      const end = source.indexOf('}', at);
      if (end === -1) return `"{" at character ${at + 1} is never closed`;
      const name = source.slice(at + 1, end);
      if (!CAPTURE_NAME.test(name)) return `"{${name}}" is not a capture: a capture is {name} with name an identifier (letters, digits, _)`;
      if (captures.includes(name)) return `capture {${name}} appears twice`;
      captures.push(name);
      regex += '([^.]+)';
      at = end + 1;
    } else if (char === '}') {
      return `"}" at character ${at + 1} closes nothing`;
    } else {
      regex += escapeRegex(char);
      at += 1;
    }
  }
  return { source, captures, regex: new RegExp(`^${regex}$`, 's') };
}

/** The captures of `name` under `pattern`, or null when it does not match. */
export function matchName(pattern: NamePattern, name: string): Record<string, string> | null {
  const found = pattern.regex.exec(name);
  if (found === null) return null;
  const values: Record<string, string> = {};
  pattern.captures.forEach((capture, index) => {
    values[capture] = found[index + 1] as string;
  });
  return values;
}

/** Checks a target template against its source's captures; a string says what is wrong. */
export function checkTemplate(template: string, source: NamePattern): string | null {
  if (template.length === 0) return 'a target name is a non-empty string';
  if (template.includes('*')) return 'a target name cannot hold "*" (only the captures of its candidate pattern, e.g. {i})';
  const used = [...template.matchAll(/\{([^}]*)\}/g)].map((found) => found[1] as string);
  for (const name of used) {
    if (!source.captures.includes(name)) return `{${name}} is not a capture of the candidate pattern "${source.source}"`;
  }
  if (/[{}]/.test(template.replace(/\{[^}]*\}/g, ''))) return 'unbalanced "{" or "}"';
  return null;
}

export function fillTemplate(template: string, captures: Readonly<Record<string, string>>): string {
  return template.replace(/\{([^}]*)\}/g, (_whole, name: string) => captures[name] ?? '');
}
