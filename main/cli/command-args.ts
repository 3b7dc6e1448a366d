// Flag parsing shared by the CLI commands: node's parseArgs reads the flags (strict, no
// positionals), a zod schema checks their values, and every problem becomes a InputError (exit 2)
// prefixed with the command's name. Also the flag schemas several commands share.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { InputError } from '../core/io/input-error.ts';

/** --isolation process|thread, default process. */
export const isolationArg = z.enum(['process', 'thread'], { error: '--isolation: expected "process" or "thread"' }).default('process');

/** --timeout <seconds> per pass, default 60 (zod's number refuses an infinite one). */
export const timeoutArg = z.coerce
  .number({ error: '--timeout: expected a number of seconds' })
  .positive({ error: '--timeout: expected a positive number of seconds' })
  .default(60);

/** --option key=value, repeatable. */
export const engineOptionsArg = z.array(z.string().regex(/^[^=\s]+=.*$/, { error: '--option: expected key=value' })).default([]);

/** `hint` follows parseArgs' own message (an unknown or malformed flag). */
export function parseCommandArgs<S extends z.ZodType>(command: string, argv: readonly string[], options: NonNullable<ParseArgsConfig['options']>, schema: S, hint = ''): z.infer<S> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new InputError(`${command}: ${(error as Error).message}${hint}`);
  }
  const parsed = schema.safeParse(values);
  if (!parsed.success) throw new InputError(`${command}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  return parsed.data;
}
