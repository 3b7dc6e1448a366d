// Verdicts in execution-order importance and their short labels (colours live in the stylesheet
// under .verdict-<name>).
import type { WireVerdict } from '../../../protocol/inspector-api.ts';

export const VERDICTS: readonly WireVerdict[] = ['FAIL', 'REVIEW_REQUIRED', 'KNOWN_GAP', 'GAP', 'PASS'];

export const VERDICT_LABEL: Record<WireVerdict, string> = {
  PASS: 'PASS',
  FAIL: 'FAIL',
  GAP: 'GAP',
  KNOWN_GAP: 'KNOWN',
  REVIEW_REQUIRED: 'REVIEW',
};

export function verdictClass(verdict: WireVerdict): string {
  return `verdict-${verdict.toLowerCase().replace('_', '-')}`;
}
