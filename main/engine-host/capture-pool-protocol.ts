// What the engine's thread (capture-pool.ts, the producer) and the capture writer thread
// (capture-writer-thread.ts, the consumer) share: a small control block in a SharedArrayBuffer,
// read and written with Atomics, and the messages on their MessagePort (received synchronously
// with receiveMessageOnPort: neither thread returns to its event loop while a pass runs).
import { z } from 'zod';
import { RunOutcomeSchema } from '../core/bundle/manifest-schema.ts';

/** Int32 slots of the control block. */
export const SIGNAL = {
  /** Bumped by the producer whenever it publishes entries or posts a request: the writer waits on it. */
  HEAD: 0,
  /** Bumped by the writer whenever it has applied entries (or failed): the producer waits on it for room. */
  TAIL: 1,
  /** 1 once the writer failed: nothing more is applied; its reason comes as a 'failed' message. */
  FAILED: 2,
  /** Bumped by the writer with every message it posts. */
  REPLY: 3,
  /** 1 once the writer thread has ended (finished, closed, or stopped by an error). */
  DONE: 4,
} as const;
export const SIGNAL_SLOTS = 6;

/** BigInt64 slots of the control block (byte offset 8 × slot, after the SIGNAL_SLOTS Int32 slots). */
export const POSITION = {
  /** Ring bytes published by the producer, counted from the start of the capture. */
  HEAD: 3,
  /** Ring bytes the writer has applied (or skipped at a wrap), same count. */
  TAIL: 4,
  /** HEAD at the time the ring was (re)mapped: ring offset = (position − BASE) mod CAPACITY. */
  BASE: 5,
  /** Address of the ring's mapping (of the file, header included) in this process. */
  ADDRESS: 6,
  /** Ring bytes after the header. */
  CAPACITY: 7,
} as const;

export const CONTROL_BYTES = 64;

export const WriterDataSchema = z.object({
  control: z.custom<SharedArrayBuffer>(
    (value) => value instanceof SharedArrayBuffer && value.byteLength === CONTROL_BYTES,
    'expected the control SharedArrayBuffer',
  ),
  port: z.custom<import('node:worker_threads').MessagePort>(
    (value) => typeof value === 'object' && value !== null && 'postMessage' in value,
    'expected a MessagePort',
  ),
});

/** Producer → writer. */
export const WriterRequestSchema = z.discriminatedUnion('op', [
  /** Create the bundle in `dir` (NativeBundleWriter.create). */
  z.object({ op: z.literal('begin'), dir: z.string().min(1), header: z.unknown() }),
  /** Apply every published entry, write manifest.json, end the thread. */
  z.object({ op: z.literal('finish'), run: RunOutcomeSchema }),
  /** Stop without sealing (what is written stays for recover), end the thread. */
  z.object({ op: z.literal('close') }),
]);
export type WriterRequest = z.infer<typeof WriterRequestSchema>;

/** Writer → producer. */
export const WriterMessageSchema = z.union([
  z.object({ type: z.literal('reply'), ok: z.literal(true), manifestPath: z.string().nullable() }),
  z.object({ type: z.literal('reply'), ok: z.literal(false), message: z.string() }),
  /** The writer could not apply an entry: the capture cannot go on. */
  z.object({ type: z.literal('failed'), message: z.string() }),
]);
export type WriterMessage = z.infer<typeof WriterMessageSchema>;
