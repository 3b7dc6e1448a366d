// A judging worker sends a manifest to the session in parts, at most MANIFEST_PARTS_IN_FLIGHT
// ahead of the session's acknowledgements (judge-worker.ts sendManifest): Node hands a thread all
// the messages queued on its port in one turn, so a manifest sent all at once held the serving
// thread for the whole burst. Sizes are KB: 8 passes of 300 boundaries, a part each.
import { Worker } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { MANIFEST_PARTS_IN_FLIGHT, parseManifestMessage, type ToWorker } from '../../main/session/judge-messages.ts';
import { judgeWorkerPath } from '../../main/session/judge-pool.ts';
import { writeTablePair } from '../helpers/synthetic-run.ts';
import { removeTempDirs, tempDir } from './session-fixtures.ts';

afterAll(removeTempDirs);

describe("a worker's manifest, in parts", () => {
  it('sends no more than the window ahead of the acknowledgements, and all of it once acknowledged', async () => {
    const pair = writeTablePair(tempDir('manifest-window'), 'window', 8, 300);
    const worker = new Worker(judgeWorkerPath());
    try {
      const parts: unknown[] = [];
      let last = false;
      worker.on('message', (raw: unknown) => {
        const message = parseManifestMessage(raw);
        if (message?.type !== 'manifestPart') throw new Error(`not a manifest part: ${JSON.stringify(raw).slice(0, 200)}`);
        parts.push(message);
        last ||= message.last;
      });
      worker.postMessage({ type: 'manifest', requestId: 7, place: { kind: 'bundle', dir: pair.nativeDir } } satisfies ToWorker);
      // Unacknowledged, the worker stops at the window (the manifest is read within this wait).
      for (let waited = 0; parts.length < MANIFEST_PARTS_IN_FLIGHT && waited < 10_000; waited += 20) await sleep(20);
      await sleep(300);
      expect(parts).toHaveLength(MANIFEST_PARTS_IN_FLIGHT);
      expect(last).toBe(false);
      // Each acknowledgement lets one more part go, until the last.
      for (let acks = 0; !last && acks < 100; acks++) {
        const before = parts.length;
        worker.postMessage({ type: 'manifestAck', requestId: 7 } satisfies ToWorker);
        for (let waited = 0; parts.length === before && waited < 5_000; waited += 5) await sleep(5);
        expect(parts.length).toBe(before + 1);
      }
      expect(last).toBe(true);
      expect(parts).toHaveLength(8);
    } finally {
      await worker.terminate();
    }
  });
});
