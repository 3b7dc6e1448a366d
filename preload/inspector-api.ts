// The typed API the renderer sees, with zod schemas for every message crossing IPC.
import { z } from 'zod';

export const CaptureRowSchema = z.object({
  pass: z.number().int(),
  boundary: z.string(),
  stage: z.string(),
  dtype: z.string(),
  shape: z.array(z.number().int()),
  contract: z.enum(['bit_exact', 'faithful', 'none']),
  status: z.enum(['identical', 'within', 'outside', 'differs', 'missing', 'extra', 'mismatch']),
  maxAbs: z.number().nullable(),
  maxUlp: z.number().nullable(),
});

export const CaptureSummaryMessageSchema = z.object({
  caseId: z.string(),
  outDir: z.string(),
  run: z.object({
    status: z.string(),
    message: z.string(),
    last_pass: z.number().int().nullable(),
    last_boundary: z.string().nullable(),
  }),
  rows: z.array(CaptureRowSchema),
  summary: z
    .object({
      compared: z.number().int(),
      identical: z.number().int(),
      within: z.number().int(),
      failing: z.number().int(),
      missing: z.number().int(),
      extra: z.number().int(),
    })
    .nullable(),
});
export type CaptureSummaryMessage = z.infer<typeof CaptureSummaryMessageSchema>;

export interface InspectorApi {
  /** Capture the embedded default and return its per-boundary summary. */
  captureDefault(): Promise<CaptureSummaryMessage>;
}
