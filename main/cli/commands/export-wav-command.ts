// `trace-inspector export-wav`: the PCM stream of a bundle's declared audio boundary (the valid
// region of every pass's record, in pass order) as a mono 32-bit float WAV at the rate the
// manifest declares (audio-declarations.ts). Never overwrites a file.
import { resolve } from 'node:path';
import { z } from 'zod';
import { openBundle } from '../../core/bundle/bundle-reader.ts';
import { BundleError } from '../../core/bundle/errors.ts';
import { audioDeclarations, declaredAudioList } from '../../core/audio/audio-declarations.ts';
import { readPcmStream } from '../../core/audio/pcm-stream.ts';
import { WavError, writeWavFile } from '../../core/audio/wav.ts';
import { EXIT_OK, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';
import { InputError } from '../../core/io/input-error.ts';

export const EXPORT_WAV_USAGE = `usage: trace-inspector export-wav --bundle <dir> [--boundary <name>] [--reference <dir>] --out <file.wav>

Concatenates the valid region of every pass's record of a declared audio boundary in pass order
and writes it as a mono 32-bit float WAV at the sample rate the manifest declares (its "audio"
map; the reference model's detok.pcm is 24 kHz). --boundary may be left out when the bundle
declares one audio boundary. A native bundle takes the declaration and the valid regions from
its --reference. Refuses an existing --out file. See docs/audio.md.
`;

const ExportWavArgsSchema = z.object({
  bundle: z.string({ error: '--bundle: required (a bundle folder)' }).min(1, { error: '--bundle: expected a bundle folder' }),
  boundary: z.string().min(1, { error: '--boundary: expected a boundary name' }).optional(),
  reference: z.string().min(1, { error: '--reference: expected a reference bundle folder' }).optional(),
  out: z
    .string({ error: '--out: required (a .wav file)' })
    .min(1, { error: '--out: expected a .wav file' })
    .regex(/\.wav$/i, { error: '--out: expected a file name ending in .wav' }),
});

function parseExportWavArgs(argv: readonly string[]): z.infer<typeof ExportWavArgsSchema> {
  return parseCommandArgs('export-wav', argv, ExportWavArgsSchema);
}

export async function runExportWavCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseExportWavArgs(argv);
  const bundleDir = resolve(io.cwd, args.bundle);
  const out = resolve(io.cwd, args.out);
  const referenceDir = args.reference === undefined ? null : resolve(io.cwd, args.reference);
  let stream;
  let boundary = args.boundary ?? '';
  try {
    const bundle = await openBundle(bundleDir);
    const reference =
      referenceDir === null
        ? null
        : await openBundle(referenceDir).catch(async (error: unknown) => {
            await bundle.close();
            if ((error as NodeJS.ErrnoException).code === 'ENOENT')
              throw new InputError(`export-wav: --reference ${referenceDir}: not a bundle folder (${(error as Error).message})`);
            throw error;
          });
    try {
      const declaring = reference ?? bundle;
      if (args.boundary === undefined) {
        const declared = [...audioDeclarations(declaring.manifest).keys()];
        if (declared.length !== 1) {
          throw new InputError(
            `export-wav: ${declaring.manifestPath} declares ${declared.length === 0 ? 'no audio boundary' : `${declared.length} audio boundaries (${declaredAudioList(declaring.manifest)})`}: ` +
              `${declared.length === 0 ? 'nothing to export (see docs/bundle-format.md, "audio")' : 'choose one with --boundary'}`,
          );
        }
        boundary = declared[0] as string;
      }
      stream = await readPcmStream(bundle, boundary, reference);
    } finally {
      await bundle.close();
      await reference?.close();
    }
  } catch (error) {
    if (error instanceof BundleError) throw new InputError(`export-wav: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`export-wav: ${bundleDir}: not a bundle folder (${(error as Error).message})`);
    throw error;
  }
  if (stream.passes.length === 0) {
    throw new InputError(`export-wav: ${bundleDir}: no pass records boundary "${boundary}"`);
  }
  try {
    await writeWavFile(out, stream.samples, stream.sampleRate);
  } catch (error) {
    if (error instanceof WavError) throw new InputError(`export-wav: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`export-wav: ${out}: cannot create the file (${(error as Error).message})`);
    throw error;
  }
  const seconds = stream.samples.length / stream.sampleRate;
  io.stdout(
    `wrote ${out}: ${stream.samples.length} samples, ${seconds.toFixed(3)} s at ${stream.sampleRate} Hz, ` +
      `mono float32, from "${boundary}" of ${stream.passes.length} passes (${stream.passes.join(', ')})\n`,
  );
  return EXIT_OK;
}
