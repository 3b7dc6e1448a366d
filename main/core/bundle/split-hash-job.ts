// One large file hashed by several workers at once (parallel-verify.ts): one worker reads it
// whole for its own sha256, the others read its tensors in parts of about `partBytes` for their
// sha256 and chunk digests. A 0.4 GB prefill pass, hashed three times over (file, tensors, chunks)
// by one worker, held up the judging of an opened run's first pass for over a second; split,
// every core helps. The bytes are read twice (once per role), which costs far less than hashing.
import type { HashedSpan, HashJob, HashOutcome, HashSpan } from './parallel-verify.ts';

export interface SplitSizes {
  /** Files larger than this are split. */
  readonly fileBytes: number;
  /** About this many bytes of tensors per part. */
  readonly partBytes: number;
}

export const DEFAULT_SPLIT: SplitSizes = { fileBytes: 64 * 1024 * 1024, partBytes: 32 * 1024 * 1024 };

/** The hash jobs of one file of `bytes`: the job itself, or its own sha256 (no spans) then parts of its spans. */
export function splitHashJob(job: HashJob, bytes: number, sizes: SplitSizes = DEFAULT_SPLIT): HashJob[] {
  if (bytes <= sizes.fileBytes || job.spans.length === 0) return [job];
  const parts: HashJob[] = [{ ...job, spans: [] }];
  let group: HashSpan[] = [];
  let groupBytes = 0;
  const flush = (): void => {
    const first = group[0];
    const last = group.at(-1);
    if (first === undefined || last === undefined) return;
    parts.push({ ...job, spans: group, range: { begin: first.begin, end: Math.max(...group.map((span) => span.end)) } });
    group = [];
    groupBytes = 0;
  };
  for (const span of [...job.spans].sort((a, b) => a.begin - b.begin)) {
    group.push(span);
    groupBytes += span.end - span.begin;
    if (groupBytes >= sizes.partBytes) flush();
  }
  flush();
  return parts;
}

const spanKey = (span: HashSpan): string => `${span.begin}:${span.end}:${String(span.chunkBytes)}`;

/**
 * The outcome of a file hashed as `parts` (splitHashJob), as if hashed whole with `spans`: the
 * first part's failure; 'changed' when the parts saw different identities of the file (it was
 * written between them); else the first part's sha256, the span digests in `spans`' order, and
 * the earliest moment an identity was read (the stricter for the pin's racy-file margin).
 */
export function combineParts(parts: readonly HashJob[], spans: readonly HashSpan[], outcomes: readonly HashOutcome[]): HashOutcome {
  if (parts.length === 1 && outcomes.length === 1) return outcomes[0] as HashOutcome;
  const failed = outcomes.find((outcome) => !outcome.ok);
  if (failed !== undefined) return failed;
  const ok = outcomes.filter((outcome): outcome is Extract<HashOutcome, { ok: true }> => outcome.ok);
  const [whole] = ok;
  if (whole === undefined || ok.length !== parts.length) return { ok: false, problem: 'unreadable', reason: 'was not hashed in full' };
  if (ok.some((outcome) => outcome.pin.identity !== whole.pin.identity)) {
    return { ok: false, problem: 'changed', reason: 'was written to while being hashed (its identity differed between the parts hashed)' };
  }
  const bySpan = new Map<string, HashedSpan>();
  parts.forEach((part, p) =>
    part.spans.forEach((span, s) => {
      const hashed = ok[p]?.spans[s];
      if (hashed !== undefined) bySpan.set(spanKey(span), hashed);
    }),
  );
  const ordered: HashedSpan[] = [];
  for (const span of spans) {
    const hashed = bySpan.get(spanKey(span));
    if (hashed === undefined) return { ok: false, problem: 'unreadable', reason: `was not hashed in full (bytes ${span.begin}..${span.end})` };
    ordered.push(hashed);
  }
  const statAtMs = Math.min(...ok.map((outcome) => outcome.pin.statAtMs));
  return { ok: true, sha256: whole.sha256, bytes: whole.bytes, spans: ordered, pin: { ...whole.pin, statAtMs } };
}
