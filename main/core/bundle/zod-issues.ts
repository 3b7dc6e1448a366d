// Turns zod issues into BundleIssues: one per problem, each with its JSON path, and "missing"
// said plainly when the field is absent (zod's own wording is "expected string, received
// undefined").
import type { z } from 'zod';
import { formatFieldPath, type BundleErrorCode, type BundleIssue } from './errors.ts';

/** The value at `path` inside `root`, or undefined when any step is absent. */
export function valueAtPath(root: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** `root` with `value` at `path`, copying only the objects along the path. */
function withValueAt(root: unknown, path: readonly PropertyKey[], value: unknown): unknown {
  const [key, ...rest] = path;
  if (key === undefined) return value;
  const node = root !== null && typeof root === 'object' ? (root as Record<PropertyKey, unknown>) : {};
  const copy: Record<PropertyKey, unknown> = Array.isArray(node) ? ([...node] as unknown as Record<PropertyKey, unknown>) : { ...node };
  copy[key] = withValueAt(node[key], rest, value);
  return copy;
}

/**
 * Whether the field at `path` accepts null (`"max_ulp": null`): the input with null there
 * leaves no issue at that path. Asked only for a missing field, so "missing" can say "a number
 * or null" where null is allowed (required all the same).
 */
function acceptsNull(schema: z.ZodType, input: unknown, path: readonly PropertyKey[]): boolean {
  const result = schema.safeParse(withValueAt(input, path, null));
  if (result.success) return true;
  const at = formatFieldPath(path);
  return !result.error.issues.some((issue) => formatFieldPath(issue.path) === at);
}

/**
 * `schema` (the one that produced `error`), when given, lets a missing nullable field be named
 * as such: "missing (a number or null)".
 */
export function issuesFromZod(
  error: z.ZodError,
  input: unknown,
  code: BundleErrorCode,
  prefix: readonly PropertyKey[] = [],
  schema?: z.ZodType,
): BundleIssue[] {
  const issues: BundleIssue[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        issues.push({ code, field: formatFieldPath([...path, key]), message: 'unknown field (not part of this schema version)' });
      }
      continue;
    }
    const absent = issue.path.length > 0 && valueAtPath(input, issue.path) === undefined;
    const nullable = absent && issue.code === 'invalid_type' && schema !== undefined && acceptsNull(schema, input, issue.path);
    const message =
      absent && issue.code === 'invalid_type' ? (nullable ? `missing (a ${issue.expected} or null)` : `missing (${issue.expected} required)`) : issue.message;
    issues.push({ code, field: formatFieldPath(path), message });
  }
  return issues;
}
