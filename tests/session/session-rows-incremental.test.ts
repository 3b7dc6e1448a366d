// getRows with `since`: a step's rows alone (mode 'append'), every row after anything else (mode
// 'full'), and the client's merge of the appends equal to the full list, row for row, at every
// version of a whole run. Plus the rows' `pcm` flag, the audio panel's list of playable streams.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pcmStreams } from '../../main/core/audio/pcm-boundary.ts';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { RowsLog } from '../../main/session/rows-log.ts';
import type { BoundaryRow } from '../../protocol/inspector-api.ts';
import { mergeRows } from '../../protocol/rows-merge.ts';
import { cleanupBundles, f32, faithful, makeBundle, tensor } from '../compare/compare-fixtures.ts';
import { referenceBundle } from '../helpers/paths.ts';
import { failureOf, openSession, removeTempDirs, type TestSession } from './session-fixtures.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';
import { ROWS_PER_TURN } from '../../main/session/rows-encoding.ts';
import { writeTablePair } from '../helpers/synthetic-run.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { countTurns } from '../helpers/event-loop-turns.ts';

let t: TestSession;
afterAll(async () => {
  await t?.session.close();
  removeTempDirs();
  await cleanupBundles();
});

/** The client: the rows and version it holds, updated with `since` exactly as the renderer does. */
class RowsClient {
  rows: BoundaryRow[] = [];
  version: number | null = null;

  async refresh(): Promise<{ mode: 'full' | 'append'; received: BoundaryRow[] }> {
    const reply = await t.call('getRows', this.version === null ? {} : { since: this.version });
    const merged = mergeRows(this.rows, reply);
    if (merged === null) throw new Error(`append at version ${reply.rowsVersion} does not continue ${this.rows.length} held rows`);
    this.rows = merged;
    this.version = reply.rowsVersion;
    return { mode: reply.mode, received: decodeRows(reply) };
  }
}

const fullRows = async (): Promise<BoundaryRow[]> => {
  const reply = await t.call('getRows', {});
  expect(reply.mode).toBe('full');
  return decodeRows(reply);
};

describe('incremental rows over a whole run', () => {
  const client = new RowsClient();
  beforeAll(async () => {
    t = openSession('rows-incremental');
    await t.call('openDefault', {});
  });

  it('the first fetch is full; each step appends exactly its pass, and the merge equals the full list at every version', async () => {
    expect(await client.refresh()).toEqual({ mode: 'full', received: [] });
    let snapshot = await t.call('prefill', {});
    let steps = 0;
    for (;;) {
      const { mode, received } = await client.refresh();
      expect(mode, `pass ${steps}`).toBe('append');
      expect(client.version).toBe(snapshot.rowsVersion);
      // Only the new pass, in execution order, continuing the rows held.
      expect(received.length).toBeGreaterThan(0);
      expect(new Set(received.map((row) => row.pass))).toEqual(new Set([steps]));
      expect(client.rows).toEqual(await fullRows());
      steps += 1;
      if (snapshot.nextPass === null) break;
      snapshot = await t.call('step', {});
    }
    expect(snapshot.run.status).toBe('completed');
    expect(steps).toBe(snapshot.timeline.length);
    expect(client.rows).toHaveLength(snapshot.rowCount);
    // Nothing changed: an empty append, and the held list is kept as it is.
    const held = client.rows;
    expect(await client.refresh()).toEqual({ mode: 'append', received: [] });
    expect(client.rows).toBe(held);
  });

  it('a client several versions behind gets every row appended since, in order', async () => {
    await t.call('reset', {});
    await t.call('prefill', {});
    const behind = new RowsClient();
    await behind.refresh();
    const held = behind.rows.length;
    await t.call('step', {});
    await t.call('step', {});
    const { mode, received } = await behind.refresh();
    expect(mode).toBe('append');
    expect(received.map((row) => row.order)).toEqual(received.map((_, i) => held + i));
    expect(new Set(received.map((row) => row.pass))).toEqual(new Set([1, 2]));
    expect(behind.rows).toEqual(await fullRows());
  });

  it('an oracle switch, a reset, an opened bundle: full, even for a client that was current', async () => {
    const current = new RowsClient();
    await current.refresh();
    await t.call('setOracle', { oracle: 'fp64' });
    const switched = await current.refresh();
    expect(switched.mode).toBe('full');
    expect(switched.received).toEqual(await fullRows());
    // The numbers did change: an append of nothing would have kept the reference's.
    await t.call('setOracle', { oracle: 'reference' });
    expect((await current.refresh()).mode).toBe('full');

    const beforeReset = current.version;
    await t.call('reset', {});
    expect(await current.refresh()).toEqual({ mode: 'full', received: [] });
    // A version from before the reset is older than the last full change: full again.
    const stale = await t.call('getRows', { since: beforeReset ?? 0 });
    expect(stale.mode).toBe('full');
    expect(decodeRows(stale)).toEqual([]);

    await t.call('prefill', {});
    expect((await current.refresh()).mode).toBe('append');
    await t.call('openBundle', { dir: referenceBundle('interleaved') });
    expect(await current.refresh()).toEqual({ mode: 'full', received: [] });
  });

  it('a version this session never issued gets every row; a malformed one is refused', async () => {
    await t.call('prefill', {});
    const { rowsVersion } = await t.call('getSession', {});
    const future = await t.call('getRows', { since: rowsVersion + 1 });
    expect(future.mode).toBe('full');
    expect(future.count).toBeGreaterThan(0);
    const error = await failureOf(t.call('getRows', { since: -1 }));
    expect(error.message).toMatch(/request\.since/);
  });
});

describe('the rows log', () => {
  it('answers appends since any version after the last full change, and nothing before it', () => {
    const log = new RowsLog(100);
    log.record('full', 0); // 101: from no rows to none, nothing a client holds is wrong
    expect(log.appendedFrom(100)).toBe(0);
    log.record('append', 5); // 102
    log.record('append', 9); // 103
    expect(log.version).toBe(103);
    expect([99, 100, 101, 102, 103, 104].map((since) => log.appendedFrom(since))).toEqual([null, 0, 0, 5, 9, null]);
    expect(log.appendedFrom(undefined)).toBeNull();
    log.record('full', 9); // 104: the same count, but every row may have changed
    expect([103, 104].map((since) => log.appendedFrom(since))).toEqual([null, 9]);
    log.record('append', 4); // 105: an "append" that shrank the rows is not one
    expect([104, 105].map((since) => log.appendedFrom(since))).toEqual([null, 4]);
    log.record('full', 0); // 106: a reset
    expect([105, 106].map((since) => log.appendedFrom(since))).toEqual([null, 0]);
  });

  it("two sessions start at different versions, so one session's version is unknown to the other", () => {
    const versions = new Set(Array.from({ length: 8 }, () => new RowsLog().version));
    expect(versions.size).toBeGreaterThan(1);
  });
});

describe('pcm rows', () => {
  it('flag exactly the playable streams of a run (detok.pcm), not the other 1-D F32 audio boundaries', async () => {
    const other = openSession('rows-pcm');
    try {
      await other.call('openDefault', {});
      await other.call('runToEnd', {});
      const rows = decodeRows(await other.call('getRows', {}));
      const flagged = new Set(rows.filter((row) => row.pcm).map((row) => row.boundary));
      expect(flagged).toEqual(new Set(['detok.pcm']));
      // detok.ola / envelope / embed are one-dimensional F32 records of every audio pass too.
      for (const name of ['detok.ola', 'detok.envelope', 'detok.embed']) {
        const row = rows.find((candidate) => candidate.boundary === name);
        expect(row?.dtype, name).toBe('F32');
        expect(row?.shape, name).toHaveLength(1);
        expect(row?.pcm, name).toBe(false);
      }
      const audio = await other.call('getAudio', { boundary: 'detok.pcm' });
      expect(audio.native.length).toBeGreaterThan(0);
    } finally {
      await other.session.close();
    }
  });

  it('the speech case: the 16 kHz frontend signals of the prefill are not streams the panel plays', async () => {
    const speech = await openBundle(referenceBundle('speech'));
    try {
      expect(speech.boundary(0, 'frontend.resampled')?.dtype).toBe('F32');
      expect([...pcmStreams(speech)]).toEqual(['detok.pcm']);
    } finally {
      await speech.close();
    }
  });

  it('only boundaries the manifest declares audio are streams; a declaration that does not fit is refused', async () => {
    const audio = { max_esr: 0.01, min_snr_db: null, max_mr_stft: null, max_null_residual_dbfs: null, max_null_offset: null, derivation: 'test' };
    const bundle = await makeBundle('reference', [
      [
        tensor('voice', 'F32', [4], f32([0, 1, 0, -1]), { contract: { ...faithful(), audio } }),
        tensor('frame', 'F32', [4], f32([0, 1, 0, 0]), { valid: { axis: 0, length: 2, padding: 'zero' } }),
        tensor('plain', 'F32', [4], f32([1, 2, 3, 4])),
        tensor('grid.pcm', 'F32', [2, 2], f32([1, 2, 3, 4])),
      ],
    ]);
    // Audio bounds, a valid region or a .pcm name declare nothing: without an "audio" map only
    // the reference model's detok.pcm would be audio, and this bundle has none.
    expect([...pcmStreams(bundle)]).toEqual([]);
    const manifestPath = join(bundle.dir, 'manifest.json');
    const declare = async (declared: Record<string, { sample_rate: number }>): Promise<TraceBundle> => {
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
      writeFileSync(manifestPath, JSON.stringify({ ...manifest, audio: declared }));
      return openBundle(bundle.dir);
    };
    const declared = await declare({ voice: { sample_rate: 16000 }, frame: { sample_rate: 16000 } });
    try {
      expect([...pcmStreams(declared)].sort()).toEqual(['frame', 'voice']);
    } finally {
      await declared.close();
    }
    await expect(declare({ 'grid.pcm': { sample_rate: 16000 } })).rejects.toThrow(
      /audio\["grid\.pcm"\]: declared audio, but pass 0 records "grid\.pcm" as F32 \[2, 2\]/,
    );
  });
});

describe('a whole long run fetched at once', () => {
  it('is built and encoded in turns, the serving thread answering meanwhile: every row once, in order, as a second fetch (from the cache) gives them', async () => {
    const root = freshTempDir('rows-in-turns');
    // Just over one slice of rows: two slices, one turn between them.
    const perPass = Math.ceil((ROWS_PER_TURN + 1) / 3);
    const pair = writeTablePair(root, 'rows-in-turns', 3, perPass);
    const long = openSession('rows-in-turns');
    try {
      await long.call('openBundle', { dir: pair.referenceDir });
      const opened = await long.call('openRun', { dir: pair.nativeDir });
      expect(opened.rowCount).toBe(3 * perPass);
      // Nothing has asked for the rows yet: this fetch builds all of them.
      const counting = countTurns();
      const first = await long.call('getRows', {});
      const turns = counting.stop();
      // A turn between the two slices of rows and between the reply's columns, at least.
      expect(turns).toBeGreaterThanOrEqual(1 + (Object.keys(first.columns).length - 1));
      const rows = decodeRows(first);
      expect(rows).toHaveLength(3 * perPass);
      expect(rows.map((row) => row.order)).toEqual(rows.map((_, i) => i));
      expect(rows.filter((row) => row.firstDivergence)).toHaveLength(1);
      expect(decodeRows(await long.call('getRows', {}))).toEqual(rows);
    } finally {
      await long.session.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
