// Real-time factor of the reference engine over the full pipeline (the `speech` case: PCM in,
// frontend, encoder, adapter, backbone, Depthformer, streaming detokenizer, PCM out): seconds of
// output audio per second of engine compute, with tracing off (record callback disabled) and
// on (every boundary captured into a bundle), measured alternately in one run so the capture
// overhead is visible for a realistic mix of large and small boundaries.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle, resolveWeights } from '../../main/core/bundle/bundle-reader.ts';
import { REFERENCE_ENGINE, referenceBundle } from '../helpers/paths.ts';
import { captureHeader, type NamedTensor } from '../engine-host/engine-host-fixtures.ts';

const REPETITIONS = 6;
const SAMPLE_RATE = 24000;

export async function benchRealTimeFactor(): Promise<string[]> {
  const reference = await openBundle(referenceBundle('speech'));
  const scratch = mkdtempSync(join(tmpdir(), 'ti-rtf-'));
  const host = await EngineHost.start({ library: REFERENCE_ENGINE, isolation: 'process' });
  try {
    const inputs: NamedTensor[] = [];
    for (const entry of reference.manifest.inputs) {
      const tensor = await reference.readInput(entry.name);
      inputs.push({ name: entry.name, dtype: tensor.dtype, shape: [...tensor.shape], data: tensor.data });
    }
    // Output audio = the valid samples of every detok.pcm the reference declares.
    let outputSamples = 0;
    for (const pass of reference.passes) {
      const pcm = pass.boundaries.find((entry) => entry.name === 'detok.pcm');
      if (pcm) outputSamples += pcm.valid?.length ?? (pcm.shape[0] as number);
    }
    const audioSeconds = outputSamples / SAMPLE_RATE;
    await host.open({}, await resolveWeights(reference));
    for (const input of inputs) await host.setInput(input.name, input);

    const computeMs: Record<'off' | 'on', number[]> = { off: [], on: [] };
    let bytesPerRun = 0;
    for (let rep = 0; rep < REPETITIONS + 1; rep++) {
      for (const mode of rep % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        await host.reset();
        const dir = join(scratch, `${mode}-${rep}`);
        if (mode === 'on') await host.beginCapture(dir, captureHeader(host, inputs, 'rtf'));
        await host.setRecordCallbackEnabled(mode === 'on');
        let ms = 0;
        let bytes = 0;
        for (const pass of reference.passes) {
          const result = await host.runPass(pass.kind);
          if (result.status !== 'ok') throw new Error(`rtf bench: pass ${pass.index} ${result.status}`);
          ms += result.durationMs;
          bytes += result.bytes;
        }
        if (mode === 'on') {
          await host.finishCapture({ status: 'completed', message: '', last_pass: reference.passes.length - 1, last_boundary: null });
          rmSync(dir, { recursive: true, force: true });
          bytesPerRun = bytes;
        }
        if (rep > 0) computeMs[mode].push(ms); // rep 0 warms up
      }
    }
    const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
    const off = median(computeMs.off);
    const on = median(computeMs.on);
    return [
      `case speech: ${reference.passes.length} passes, ${outputSamples} output samples (${audioSeconds.toFixed(3)} s of 24 kHz audio), ${(bytesPerRun / 1024 / 1024).toFixed(1)} MiB traced per run`,
      `tracing off: ${off.toFixed(1)} ms compute, real-time factor ${(audioSeconds / (off / 1000)).toFixed(1)}x (seconds of audio per second of compute)`,
      `tracing on:  ${on.toFixed(1)} ms compute, real-time factor ${(audioSeconds / (on / 1000)).toFixed(1)}x`,
      `capture overhead on the full pipeline: ${(on / off).toFixed(2)}x (medians of ${REPETITIONS} alternating runs, engine pass time incl. record callbacks)`,
    ];
  } finally {
    await host.close();
    await reference.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
