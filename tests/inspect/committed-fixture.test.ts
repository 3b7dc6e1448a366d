// The views on the committed nan_inf case: its NaN enters at audio-in row 1 element 5 (prompt
// position 3) and its +inf at row 2 element 17 (position 4), so in backbone.embed [8, 64] of
// pass 0 they sit at flat 3 * 64 + 5 = 197 and 4 * 64 + 17 = 273, the first ones in execution
// order. The fp64 oracle stands in for a native run (same structure, its own values).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { elementAt } from '../../main/core/inspect/element-bits.ts';
import { findFirstSpecial } from '../../main/core/inspect/first-special.ts';
import { specials } from '../../main/core/inspect/special-values.ts';
import { pooledView } from './decoded-view.ts';
import type { BoundaryRef } from '../../protocol/inspector-api.ts';
import { oracleBundle, referenceBundle } from '../helpers/paths.ts';

let reference: TraceBundle;
let oracle: TraceBundle;
let order: BoundaryRef[];
/** Flat positions in backbone.embed [8, 64] of the first NaN and first +inf, derived from the inputs. */
let nanAt: number;
let infAt: number;
let embedWidth: number;

/**
 * Where a special value of the audio-in rows lands in backbone.embed, from the case's inputs
 * alone: audio-in row j fills the j-th prompt position holding the audio placeholder -1, so an
 * element (j, c) of audio_in_embeds sits at flat position * width + c of the embedding.
 */
async function firstSpecialInEmbed(bundle: TraceBundle, test: (value: number) => boolean): Promise<number> {
  const prompt = await bundle.readInput('prompt_tokens');
  const tokens = new Int32Array(prompt.data.buffer, prompt.data.byteOffset, prompt.data.byteLength / 4);
  const audio = await bundle.readInput('audio_in_embeds');
  const values = new Float32Array(audio.data.buffer.slice(audio.data.byteOffset, audio.data.byteOffset + audio.data.byteLength));
  const width = audio.shape[1] as number;
  const audioPositions = [...tokens.keys()].filter((position) => tokens[position] === -1);
  const candidates: number[] = [];
  values.forEach((value, flat) => {
    if (!test(value)) return;
    const position = audioPositions[Math.floor(flat / width)];
    if (position !== undefined) candidates.push(position * width + (flat % width));
  });
  expect(candidates.length, 'the nan_inf case must hold the special value in its audio-in rows').toBeGreaterThan(0);
  return Math.min(...candidates);
}

beforeAll(async () => {
  reference = await openBundle(referenceBundle('nan_inf'));
  oracle = await openBundle(oracleBundle('nan_inf'));
  order = reference.passes.flatMap((pass) => pass.boundaries.map((boundary) => ({ pass: pass.index, boundary: boundary.name })));
  embedWidth = (await reference.readInput('audio_in_embeds')).shape[1] as number;
  nanAt = await firstSpecialInEmbed(reference, Number.isNaN);
  infAt = await firstSpecialInEmbed(reference, (value) => value === Number.POSITIVE_INFINITY);
});

afterAll(async () => {
  await reference.close();
  await oracle.close();
});

describe('the nan_inf fixture', () => {
  it('its inputs put the NaN and the +inf where the case description says (positions 3 and 4)', () => {
    expect([nanAt, infAt]).toEqual([3 * 64 + 5, 4 * 64 + 17]);
  });

  it('finds its first NaN and first infinity in backbone.embed of the prefill', async () => {
    expect(await findFirstSpecial(null, reference, order, 'nan')).toEqual({ pass: 0, boundary: 'backbone.embed', flatIndex: nanAt, side: 'reference' });
    expect(await findFirstSpecial(null, reference, order, 'inf')).toEqual({ pass: 0, boundary: 'backbone.embed', flatIndex: infAt, side: 'reference' });
    expect(await findFirstSpecial(oracle, reference, order, 'nan')).toMatchObject({ flatIndex: nanAt, side: 'native' });
  });

  it('shows that element as a NaN and its cell as a NaN cell', async () => {
    const element = await elementAt(oracle, reference, { pass: 0, boundary: 'backbone.embed', flatIndex: nanAt });
    expect(element.index).toEqual([Math.floor(nanAt / embedWidth), nanAt % embedWidth]);
    expect(element.reference?.class).toBe('nan');
    expect(element.reference?.decimal).toBe('NaN');
    const view = await pooledView(null, reference, { pass: 0, boundary: 'backbone.embed', metric: 'reference', maxRows: 4, maxCols: 8 });
    expect(view.grid).toEqual({ rows: 4, cols: 8, rowStep: 2, colStep: 8 });
    expect(view.nanCells).toContain(1 * 8 + 0);
    expect(view.argmax[8]).toBe(nanAt);
    expect(view.infCells).toContain(2 * 8 + 2);
    expect(view.values.slice(0, 8).every((value) => Number.isFinite(value))).toBe(true); // positions 0-1 stay finite
  });

  it('counts the special values of both sides', async () => {
    const out = await specials(oracle, reference, { pass: 0, boundary: 'backbone.embed' }, 50);
    expect(out.census.reference.nan).toBeGreaterThanOrEqual(1);
    expect(out.census.reference.posInf).toBeGreaterThanOrEqual(1);
    expect(out.census.native.nan).toBe(out.census.reference.nan);
    expect(out.mismatches.every((m) => m.class === 'value')).toBe(true);
  });
});
