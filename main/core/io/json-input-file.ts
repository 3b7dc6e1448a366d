// A small JSON file the user names (a contracts file, a map file), read and validated: every
// problem becomes an InputError naming the file and the field, before anything is judged.
import type { z } from 'zod';
import { GuardedReadError, readRegularFile } from './guarded-read.ts';
import { InputError } from './input-error.ts';
import { issuesFromZod } from '../bundle/zod-issues.ts';

/** A contracts or map file is small; anything larger is refused before it is parsed. */
const MAX_INPUT_FILE_BYTES = 16 * 1024 * 1024;

/** Reads `path` (a regular file within its cap) as JSON and validates it with `schema`, every problem named. */
export async function readJsonInput<S extends z.ZodType>(path: string, schema: S, what: string): Promise<z.infer<S>> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(path, MAX_INPUT_FILE_BYTES);
  } catch (error) {
    if (error instanceof GuardedReadError) throw InputError.at(path, '(file)', `cannot read the ${what}: ${error.reason}`);
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw InputError.at(path, '(root)', `the ${what} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = issuesFromZod(parsed.error, json, 'E_MANIFEST_SCHEMA');
    const first = issues[0];
    const detail = issues.length === 1 ? (first?.message ?? 'invalid') : issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ');
    throw InputError.at(path, issues.length === 1 ? (first?.field ?? '(root)') : `${issues.length} problems`, detail);
  }
  return parsed.data as z.infer<S>;
}
