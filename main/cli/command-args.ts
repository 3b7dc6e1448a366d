// Flag parsing shared by the CLI commands. Each command declares its flags once, as a zod object
// whose keys are the flag names: node's parseArgs options are derived from it (a boolean schema
// is a switch, an array schema a repeatable flag, anything else takes a value), parseArgs reads
// the command line strictly, and the same schema checks the values. Every problem becomes an
// InputError (exit 2) prefixed with the command's name. Also the flag schemas several commands share.
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

/** --json <file|->: a file, or - for stdout (the human report then goes to stderr). */
export const jsonOutputArg = z.string().min(1, { error: '--json: expected a file, or - for stdout' }).optional();

type FlagOption = NonNullable<ParseArgsConfig['options']>[string];

/** What parseArgs must know of one flag, read from its schema under optional/default/coerce wrappers. */
function flagOption(flag: string, schema: z.ZodType): FlagOption {
  let inner: z.core.$ZodType = schema;
  for (;;) {
    const def = inner._zod.def;
    if (def.type === 'optional' || def.type === 'default' || def.type === 'prefault' || def.type === 'nullable')
      inner = (def as z.core.$ZodOptionalDef).innerType;
    else if (def.type === 'pipe') inner = (def as z.core.$ZodPipeDef).in;
    else break;
  }
  const type = inner._zod.def.type;
  if (type === 'boolean') return { type: 'boolean' };
  if (type === 'array') return { type: 'string', multiple: true };
  if (type === 'string' || type === 'number' || type === 'enum' || type === 'literal') return { type: 'string' };
  // A programming error in a command's declaration, caught by the CLI tests, never by a user.
  throw new Error(`--${flag}: a flag schema of type ${type} has no command-line form`);
}

export interface CommandArgsOptions<K extends string> {
  /** The key of the schema that receives the positional arguments (as an array); none: positionals are refused. */
  positionals?: K;
  /** Follows parseArgs' own message (an unknown or malformed flag): which flags the command takes. */
  hint?: string;
}

export function parseCommandArgs<S extends z.ZodObject, K extends keyof S['shape'] & string = never>(
  command: string,
  argv: readonly string[],
  schema: S,
  options: CommandArgsOptions<K> = {},
): z.infer<S> {
  const flags: Record<string, FlagOption> = {};
  for (const [flag, flagSchema] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    if (flag !== options.positionals) flags[flag] = flagOption(flag, flagSchema);
  }
  let values: Record<string, unknown>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: [...argv], options: flags, strict: true, allowPositionals: options.positionals !== undefined }));
  } catch (error) {
    throw new InputError(`${command}: ${(error as Error).message}${options.hint ?? ''}`);
  }
  const input = options.positionals === undefined ? values : { ...values, [options.positionals]: positionals };
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new InputError(`${command}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  return parsed.data;
}
