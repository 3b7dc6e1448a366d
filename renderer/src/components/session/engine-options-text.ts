// Engine options as the user types them: "perturb.x=1, threads=2" (commas or whitespace between
// pairs). Parsing is strict so a typo is reported, not silently dropped.
export type ParsedOptions = { ok: true; options: Record<string, string> } | { ok: false; message: string };

export function parseEngineOptions(text: string): ParsedOptions {
  const options: Record<string, string> = {};
  const pairs = text
    .split(/[,\s]+/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) return { ok: false, message: `"${pair}" is not key=value` };
    const key = pair.slice(0, equals);
    if (key in options) return { ok: false, message: `"${key}" is given twice` };
    options[key] = pair.slice(equals + 1);
  }
  return { ok: true, options };
}

export function formatEngineOptions(options: Record<string, string>): string {
  return Object.entries(options)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}
