// Which audio passes emit the `audio_frame` boundaries (the detokenizer's) is read from the
// reference: its recorded detok.frame_status (0 decoded, 1 end-of-audio, 2 refused: EOA in
// another codebook) when present, depth.codes[0] == EOA only when it is not. The committed
// `clipped` case has refused frames whose code 0 is no EOA (passes 0, 3 and 4): judged by code 0
// alone they would be promised, and a run that rightly skips their detokenizer would FAIL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDescription } from '../../main/engine-host/engine-description.ts';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { passFactsOf } from '../../main/core/gate/case-verdicts.ts';
import { referenceBundle } from '../helpers/paths.ts';

const DETOKENIZER: EngineDescription = {
  abi_version: 1,
  engine: { name: 'frames', version: '1', build_id: 'test' },
  model: {},
  inputs: [],
  boundaries: [{ name: 'detok.embed', stage: 'detokenizer', dtype: 'F32', shape: [64], emit: 'audio_frame', injectable: false, doc: '' }],
  options: [],
};

let clipped: TraceBundle;
let eoa: TraceBundle;
beforeAll(async () => {
  clipped = await openBundle(referenceBundle('clipped'));
  eoa = await openBundle(referenceBundle('eoa_countdown'));
});
afterAll(async () => {
  await clipped.close();
  await eoa.close();
});

describe('audio_frame emission follows the recorded detok.frame_status', () => {
  it('refused frames (status 2, code 0 below EOA) are not decoded; decoded ones are', async () => {
    const facts = await passFactsOf(clipped, DETOKENIZER, null);
    const undecoded = [...facts].filter(([, fact]) => fact.endOfAudio).map(([pass]) => pass);
    expect(undecoded).toEqual([0, 3, 4]);
    expect(facts.get(1)?.endOfAudio).toBe(false);
  });

  it('an end-of-audio frame (status 1, code 0 == EOA) is not decoded', async () => {
    const facts = await passFactsOf(eoa, DETOKENIZER, null);
    expect([...facts].filter(([, fact]) => fact.endOfAudio).map(([pass]) => pass)).toEqual([4]);
  });

  it('the committed references agree: a pass records detok.embed exactly when its frame is decoded', async () => {
    const facts = await passFactsOf(clipped, DETOKENIZER, null);
    for (const pass of clipped.passes) {
      if (pass.mode !== 'audio') continue;
      expect(pass.boundaries.some((entry) => entry.name === 'detok.embed')).toBe(!(facts.get(pass.index)?.endOfAudio ?? false));
    }
  });
});
