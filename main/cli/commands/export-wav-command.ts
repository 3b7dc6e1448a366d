// `trace-inspector export-wav`: the PCM stream of a bundle (the valid region of every pass's
// detok.pcm, in pass order) as a 24 kHz mono 32-bit float WAV. Never overwrites a file.
import { resolve } from 'node:path';
import { z } from 'zod';
import { openBundle } from '../../core/bundle/bundle-reader.ts';
import { BundleError } from '../../core/bundle/errors.ts';
import { DEFAULT_PCM_BOUNDARY, readPcmStream } from '../../core/audio/pcm-stream.ts';
import { WavError, writeWavFile } from '../../core/audio/wav.ts';
import { EXIT_OK, UsageError, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';

export const EXPORT_WAV_USAGE = `usage: trace-inspector export-wav --bundle <dir> [--boundary detok.pcm] --out <file.wav>

Concatenates the valid region of every pass's PCM boundary (default detok.pcm, F32, 24 kHz) in
pass order and writes it as a mono 32-bit float WAV. Refuses an existing --out file.
See docs/audio.md.
`;

const ExportWavArgsSchema = z.object({
  bundle: z.string({ error: '--bundle: required (a bundle folder)' }).min(1, { error: '--bundle: expected a bundle folder' }),
  boundary: z.string().min(1, { error: '--boundary: expected a boundary name' }).default(DEFAULT_PCM_BOUNDARY),
  out: z
    .string({ error: '--out: required (a .wav file)' })
    .min(1, { error: '--out: expected a .wav file' })
    .regex(/\.wav$/i, { error: '--out: expected a file name ending in .wav' }),
});

function parseExportWavArgs(argv: readonly string[]): z.infer<typeof ExportWavArgsSchema> {
  return parseCommandArgs('export-wav', argv, { bundle: { type: 'string' }, boundary: { type: 'string' }, out: { type: 'string' } }, ExportWavArgsSchema);
}

export async function runExportWavCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseExportWavArgs(argv);
  const bundleDir = resolve(io.cwd, args.bundle);
  const out = resolve(io.cwd, args.out);
  let stream;
  try {
    const bundle = await openBundle(bundleDir);
    try {
      stream = await readPcmStream(bundle, args.boundary);
    } finally {
      await bundle.close();
    }
  } catch (error) {
    if (error instanceof BundleError) throw new UsageError(`export-wav: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`export-wav: ${bundleDir}: not a bundle folder (${(error as Error).message})`);
    throw error;
  }
  if (stream.passes.length === 0) {
    throw new UsageError(`export-wav: ${bundleDir}: no pass records boundary "${args.boundary}"`);
  }
  try {
    await writeWavFile(out, stream.samples, stream.sampleRate);
  } catch (error) {
    if (error instanceof WavError) throw new UsageError(`export-wav: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`export-wav: ${out}: cannot create the file (${(error as Error).message})`);
    throw error;
  }
  const seconds = stream.samples.length / stream.sampleRate;
  io.stdout(
    `wrote ${out}: ${stream.samples.length} samples, ${seconds.toFixed(3)} s at ${stream.sampleRate} Hz, ` +
      `mono float32, from "${args.boundary}" of ${stream.passes.length} passes (${stream.passes.join(', ')})\n`,
  );
  return EXIT_OK;
}
