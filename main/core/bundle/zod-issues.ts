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

export function issuesFromZod(
  error: z.ZodError,
  input: unknown,
  code: BundleErrorCode,
  prefix: readonly PropertyKey[] = [],
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
    const message = absent && issue.code === 'invalid_type' ? `missing (${issue.expected} required)` : issue.message;
    issues.push({ code, field: formatFieldPath(path), message });
  }
  return issues;
}
