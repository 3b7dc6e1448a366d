// The describe() schema and the catalogue helpers, on their own.
import { describe, expect, it } from 'vitest';
import { EngineLoadError } from '../../main/engine-host/engine-errors.ts';
import { isEmittedIn, parseEngineDescription, resolveShape, type EngineBoundary } from '../../main/engine-host/engine-description.ts';

const valid = {
  abi_version: 1,
  engine: { name: 'e', version: '1', build_id: 'b' },
  model: { width: 4 },
  inputs: [{ name: 'prompt_tokens', dtype: 'i32', shape: ['T'], required: true, doc: '' }],
  boundaries: [
    { name: 'a.x', stage: 'a', dtype: 'f32', shape: ['T', 4], emit: 'every_pass', injectable: true, doc: '' },
    { name: 'a.y', stage: 'a', dtype: 'bool', shape: [160], emit: 'text_out', injectable: false },
  ],
  options: [{ name: 'perturb.x', type: 'bool', default: false, doc: '' }],
};

function failure(json: unknown): EngineLoadError {
  try {
    parseEngineDescription(JSON.stringify(json), '/lib/x.so');
  } catch (error) {
    if (error instanceof EngineLoadError) return error;
    throw error;
  }
  throw new Error('parsed');
}

describe('parseEngineDescription', () => {
  it('parses dtypes into the bundle spelling and fills doc', () => {
    const parsed = parseEngineDescription(JSON.stringify(valid), '/lib/x.so');
    expect(parsed.boundaries.map((b) => b.dtype)).toEqual(['F32', 'BOOL']);
    expect(parsed.boundaries[1]?.doc).toBe('');
  });

  it('names the library and each field at fault', () => {
    const error = failure({
      ...valid,
      boundaries: [
        { ...valid.boundaries[0], emit: 'sometimes' },
        { ...valid.boundaries[1], shape: [-1] },
      ],
    });
    expect(error.library).toBe('/lib/x.so');
    expect(error.field).toBe('boundaries[0].emit');
    expect(error.message).toContain('boundaries[1].shape[0]');
  });

  it('refuses repeated boundary names and a wrong abi_version', () => {
    expect(failure({ ...valid, boundaries: [valid.boundaries[0], valid.boundaries[0]] }).field).toBe('boundaries[1].name');
    expect(failure({ ...valid, abi_version: 2 }).field).toBe('abi_version');
    expect(failure({ ...valid, engine: { name: 'e' } }).message).toContain('engine.version: missing');
  });
});

describe('catalogue helpers', () => {
  const boundary = (emit: EngineBoundary['emit']): EngineBoundary => ({ name: 'b', stage: 's', dtype: 'F32', shape: [], emit, injectable: false, doc: '' });

  it('resolves shape symbols and names an unknown one', () => {
    expect(resolveShape(['T', 2, 'R'], { T: 5, R: 3 }, 'x')).toEqual([5, 2, 3]);
    expect(() => resolveShape(['Q'], { T: 1 }, 'backbone.embed')).toThrow(/backbone.embed: shape symbol "Q"/);
  });

  it('says which passes a boundary appears in', () => {
    const plain = { pcmIn: false, endOfAudio: false };
    expect(isEmittedIn(boundary('every_pass'), 'decode', 'audio', plain)).toBe(true);
    expect(isEmittedIn(boundary('prefill'), 'prefill', 'text', plain)).toBe(true);
    expect(isEmittedIn(boundary('prefill'), 'decode', 'text', plain)).toBe(false);
    expect(isEmittedIn(boundary('text_out'), 'decode', 'audio', plain)).toBe(false);
    expect(isEmittedIn(boundary('audio_out'), 'decode', 'audio', plain)).toBe(true);
    expect(isEmittedIn(boundary('audio_out'), 'decode', 'audio', { pcmIn: false, endOfAudio: true })).toBe(true);
  });

  it('emits prefill_audio_in only in the prefill of a session given pcm_in', () => {
    expect(isEmittedIn(boundary('prefill_audio_in'), 'prefill', 'text', { pcmIn: true, endOfAudio: false })).toBe(true);
    expect(isEmittedIn(boundary('prefill_audio_in'), 'prefill', 'audio', { pcmIn: true, endOfAudio: true })).toBe(true);
    expect(isEmittedIn(boundary('prefill_audio_in'), 'prefill', 'text', { pcmIn: false, endOfAudio: false })).toBe(false);
    expect(isEmittedIn(boundary('prefill_audio_in'), 'decode', 'text', { pcmIn: true, endOfAudio: false })).toBe(false);
  });

  it('emits audio_frame only for an audio frame that is not end-of-audio', () => {
    expect(isEmittedIn(boundary('audio_frame'), 'decode', 'audio', { pcmIn: false, endOfAudio: false })).toBe(true);
    expect(isEmittedIn(boundary('audio_frame'), 'prefill', 'audio', { pcmIn: true, endOfAudio: false })).toBe(true);
    expect(isEmittedIn(boundary('audio_frame'), 'decode', 'audio', { pcmIn: false, endOfAudio: true })).toBe(false);
    expect(isEmittedIn(boundary('audio_frame'), 'decode', 'text', { pcmIn: false, endOfAudio: false })).toBe(false);
  });
});
