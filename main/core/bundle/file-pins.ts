// Pins: how a file hashed once stays verified without being read again. When a file's sha256
// (and its tensors' sha256) have been checked, its identity is recorded: device, inode, size,
// modification and change time, taken before the hash was read and again after it (equal, or the
// file was refused as changed while being hashed). Later — a comparison reading a tensor, the
// closing check before a receipt is signed — the file is stat'ed instead of re-hashed: the same
// identity means the same bytes, a different one means "re-hash and judge".
//
// Why this, and not hashing the bytes again (on the main thread as before, or on workers): the
// change time (ctime) of a file is set by the kernel on every write, truncation, rename onto it
// and attribute change, and cannot be set back by a user process (unlike mtime, which utimes can
// forge). Hashing again costs a full read and a sha256 pass per byte per check; a stat costs
// nothing. Read once, verify once, then watch the identity.
//
// When a pin is NOT trusted (the file is then hashed at every read and at the closing check, as
// it was before pins existed):
// - the file changed so recently that a second write could land in the same timestamp tick and
//   leave ctime unchanged ("racy" files, as git calls them): the ctime must be older than the
//   moment of the stat by PIN_MARGIN_MS (nanosecond filesystems on Linux stamp at the kernel's
//   tick, 1 to 10 ms) or COARSE_PIN_MARGIN_MS (a ctime with no sub-second part: a filesystem that
//   stamps whole seconds);
// - the filesystem is not a local Linux filesystem we know stamps ctime from the local clock
//   (network filesystems stamp with the server's clock, which may lag ours; other platforms are
//   not relied on);
// - TRACE_INSPECTOR_REHASH=always is set.
// The one change a stat cannot see: a process that already holds a writable shared mapping of
// the file can change pages without a timestamp update until writeback. A writer with that much
// access to the evidence while a run is judged is outside what pins guard against
// (docs/security.md); set TRACE_INSPECTOR_REHASH=always to re-hash everything instead.
import { stat, type BigIntStats } from 'node:fs';
import { promisify } from 'node:util';

/** Margin between a file's ctime and the moment its pin was taken, on nanosecond filesystems. */
export const PIN_MARGIN_MS = 100;
/** The same for a ctime stamped in whole seconds. */
export const COARSE_PIN_MARGIN_MS = 2000;
/** `TRACE_INSPECTOR_REHASH=always`: trust no pin; every read and every closing check re-hashes. */
export const REHASH_ENV = 'TRACE_INSPECTOR_REHASH';

/**
 * statfs magic numbers of local Linux filesystems whose ctime comes from the local clock at the
 * kernel's timestamp granularity: ext2/3/4, xfs, btrfs, tmpfs, overlayfs, f2fs, zfs, bcachefs.
 */
const LOCAL_FILESYSTEMS: ReadonlySet<number> = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0xf2f52010, 0x2fc12fc1, 0xca451a4e]);

/** What a hash of a file observed about it (parallel-verify.ts's worker, digest.ts). */
export interface PinEvidence {
  /** identityKey() of the file, equal before and after the hash was read. */
  readonly identity: string;
  /** The file's ctime in nanoseconds (decimal). */
  readonly ctimeNs: string;
  /** Wall-clock time (ms) taken just before the identity was read. */
  readonly statAtMs: number;
  /** statfs type of the file's filesystem (0 when unknown). */
  readonly fsType: number;
}

export interface FilePin {
  readonly identity: string;
  /** The file's sha256, as verified. */
  readonly sha256: string;
  /** sha256 of each tensor (by safetensors key) verified in the same read. */
  readonly tensors: ReadonlyMap<string, string>;
}

/** Device, inode, size, modification and change time: what any write to the file changes. */
export function identityKey(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/** Whether a hash with this evidence may stand for the file's bytes while its identity holds. */
export function pinTrusted(
  evidence: PinEvidence,
  platform: string = process.platform,
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  if (env[REHASH_ENV] === 'always') return false;
  if (platform !== 'linux' || !LOCAL_FILESYSTEMS.has(evidence.fsType)) return false;
  return ctimeOlderThanMargin(BigInt(evidence.ctimeNs), evidence.statAtMs);
}

function ctimeOlderThanMargin(ctimeNs: bigint, statAtMs: number): boolean {
  const margin = ctimeNs % 1_000_000_000n === 0n ? COARSE_PIN_MARGIN_MS : PIN_MARGIN_MS;
  return ctimeNs < BigInt(Math.floor(statAtMs) - margin) * 1_000_000n;
}

/**
 * Whether a file whose identity (identityKey) was read just after `statAtMs` was last changed
 * long enough before that any later write moves its ctime (pinTrusted's margin): bytes read
 * under it may stand for the file while the identity holds.
 */
export function ctimeSettled(identity: string, statAtMs: number): boolean {
  const ctime = identity.slice(identity.lastIndexOf(':') + 1);
  if (!/^\d+$/.test(ctime)) return false;
  return ctimeOlderThanMargin(BigInt(ctime), statAtMs);
}

// The files this process verified, by real path: the latest verification of each. A pin is only
// a shortcut: a file without one, or whose identity moved, is simply hashed again. Bounded, the
// oldest dropped first, so a long-running app does not grow without end.
const PIN_LIMIT = 8192;
const pins = new Map<string, FilePin>();

/** Records a verified file (trusted evidence only; an untrusted hash forgets any earlier pin). */
export function recordPin(realPath: string, evidence: PinEvidence, sha256: string, tensors: ReadonlyMap<string, string>): void {
  pins.delete(realPath);
  if (!pinTrusted(evidence)) return;
  pins.set(realPath, { identity: evidence.identity, sha256, tensors });
  if (pins.size > PIN_LIMIT) pins.delete(pins.keys().next().value as string);
}

/** Drops the pin of a file that failed verification. */
export function forgetPin(realPath: string): void {
  pins.delete(realPath);
}

export function pinOf(realPath: string): FilePin | undefined {
  return pins.get(realPath);
}

const statBigInt = promisify((path: string, callback: (error: NodeJS.ErrnoException | null, stats: BigIntStats) => void) =>
  stat(path, { bigint: true }, callback),
);

/** The file's identity now, or null when it cannot be stat'ed. */
export async function identityNow(path: string): Promise<string | null> {
  try {
    return identityKey(await statBigInt(path));
  } catch {
    return null;
  }
}

/**
 * True when `realPath` is pinned with this sha256 and its identity has not moved since: its
 * bytes are the ones verified. False means only "not known": hash it to find out.
 */
export async function stillAsPinned(realPath: string, sha256: string): Promise<boolean> {
  const pin = pins.get(realPath);
  if (pin === undefined || pin.sha256 !== sha256) return false;
  return (await identityNow(realPath)) === pin.identity;
}

// Manifests are small and re-hashed at the closing check; what is recorded is the sha256 each
// bundle's manifest had when it was opened, so a manifest rewritten during a run (with digests
// that match rewritten files) is caught even where no receipt pins it.
const manifestDigests = new Map<string, string>();

export function recordManifestDigest(realPath: string, sha256: string): void {
  manifestDigests.delete(realPath);
  manifestDigests.set(realPath, sha256);
  if (manifestDigests.size > PIN_LIMIT) manifestDigests.delete(manifestDigests.keys().next().value as string);
}

export function manifestDigestAtOpen(realPath: string): string | undefined {
  return manifestDigests.get(realPath);
}

/**
 * A pin handed to another thread of this process (the session's judging workers, judge-pool.ts):
 * module state is per thread, and a worker that judges a file this thread verified would
 * otherwise hash every tensor of it again. The identity is still checked around every read there.
 */
export interface SharedPin {
  readonly realPath: string;
  readonly identity: string;
  readonly sha256: string;
  readonly tensors: readonly (readonly [string, string])[];
}

/**
 * The pins this thread holds (files it verified) of the `wanted` files, each with only the wanted
 * tensors, to hand to a worker thread: a tensor left out is hashed as it is read there.
 */
export function pinsToShare(wanted: Iterable<{ readonly realPath: string; readonly tensors: ReadonlySet<string> }>): SharedPin[] {
  const shared: SharedPin[] = [];
  for (const { realPath, tensors } of wanted) {
    const pin = pins.get(realPath);
    if (pin === undefined || tensors.size === 0) continue;
    const kept = [...tensors].flatMap((key): (readonly [string, string])[] => {
      const sha256 = pin.tensors.get(key);
      return sha256 === undefined ? [] : [[key, sha256]];
    });
    if (kept.length > 0) shared.push({ realPath, identity: pin.identity, sha256: pin.sha256, tensors: kept });
  }
  return shared;
}

/** Takes pins another thread of this process recorded (pinsToShare), unless every read is to re-hash. */
export function adoptPins(shared: readonly SharedPin[], env: Readonly<Record<string, string | undefined>> = process.env): void {
  if (env[REHASH_ENV] === 'always') return;
  for (const { realPath, identity, sha256, tensors } of shared) {
    const current = pins.get(realPath);
    // The same verification shared again, for other tensors of the file: add them.
    const known = current !== undefined && current.identity === identity && current.sha256 === sha256 ? current.tensors : [];
    pins.delete(realPath);
    pins.set(realPath, { identity, sha256, tensors: new Map([...known, ...tensors]) });
    if (pins.size > PIN_LIMIT) pins.delete(pins.keys().next().value as string);
  }
}
