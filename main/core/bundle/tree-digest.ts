// The tree-sha256 digest scheme (docs/bundle-format.md, "Digest schemes"): a bundle whose manifest
// declares `"digests": {"scheme": "tree-sha256", "version": 1, "chunk_bytes": C}` states every
// digest (files[].sha256, each tensor's sha256, chunks.sha256) as a node of one tree, so hashing
// every byte of a file once yields them all, and the chunks of one large file hash in parallel:
//
//   leaf(chunk)          = sha256(0x00 || chunk bytes)           chunk i = bytes [iC, min((i+1)C, n))
//   segment(bytes of n)  = sha256(0x01 || u64(n) || u64(C) || leaf_0 || ... || leaf_{k-1})   k = ceil(n/C)
//   file(segments)       = sha256(0x02 || u64(size) || u64(C) || u64(m) || for each segment: u64(offset) || u64(length) || segment digest)
//
// u64 is 8 bytes little-endian. A tensor's digest is the segment digest of its bytes; a file's
// segments cut it at 0, at the end of the safetensors header and at every tensor's begin and end
// (so the header, each tensor and any gap are one segment each, every byte in exactly one). The
// prefix byte separates the three kinds of node, and every node binds the lengths it covers, so
// a collision of any digest is a collision of sha256. Bundles without the declaration keep the
// plain meaning: every digest is the sha256 of the bytes.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MAX_CHUNK_DIGEST_BYTES, MIN_CHUNK_DIGEST_BYTES } from './chunk-digests.ts';

export const TREE_SCHEME = 'tree-sha256';
export const TREE_SCHEME_VERSION = 1;

export const DigestDeclarationSchema = z.strictObject({
  scheme: z.literal(TREE_SCHEME, { error: `expected "${TREE_SCHEME}" (the one declared scheme; leave "digests" out for plain sha256)` }),
  version: z.literal(TREE_SCHEME_VERSION, { error: `expected ${TREE_SCHEME_VERSION} (the version of ${TREE_SCHEME} this reader speaks)` }),
  chunk_bytes: z
    .number()
    .int()
    .min(MIN_CHUNK_DIGEST_BYTES, `a chunk is at least ${MIN_CHUNK_DIGEST_BYTES} bytes`)
    .max(MAX_CHUNK_DIGEST_BYTES, `a chunk is at most ${MAX_CHUNK_DIGEST_BYTES} bytes`)
    .refine((n) => (n & (n - 1)) === 0, 'a chunk size is a power of two'),
});
export type DigestDeclaration = z.infer<typeof DigestDeclarationSchema>;

/** How a bundle's digests are to be computed: plain sha256 of the bytes, or the tree. */
export type DigestScheme = { readonly kind: 'sha256' } | { readonly kind: 'tree'; readonly chunkBytes: number };

export const PLAIN_SHA256: DigestScheme = { kind: 'sha256' };

/** The scheme a manifest declares (absent: plain sha256). */
export function schemeOf(manifest: { readonly digests?: DigestDeclaration | undefined }): DigestScheme {
  return manifest.digests === undefined ? PLAIN_SHA256 : { kind: 'tree', chunkBytes: manifest.digests.chunk_bytes };
}

/** The scheme's name as receipts and reports state it: "sha256" or "tree-sha256/1 (chunks of C bytes)". */
export function schemeName(scheme: DigestScheme): string {
  return scheme.kind === 'sha256' ? 'sha256' : `${TREE_SCHEME}/${TREE_SCHEME_VERSION}:${scheme.chunkBytes}`;
}

/** The declaration the project's writers put in a manifest for chunks of `chunkBytes`. */
export function treeDeclaration(chunkBytes: number): DigestDeclaration {
  return { scheme: TREE_SCHEME, version: TREE_SCHEME_VERSION, chunk_bytes: chunkBytes };
}

const LEAF_PREFIX = Buffer.from([0x00]);
const u64 = (value: number): Buffer => {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(BigInt(value));
  return out;
};

/** leaf(chunk) = sha256(0x00 || chunk), lowercase hex. */
export function leafDigest(chunk: Uint8Array): string {
  return createHash('sha256').update(LEAF_PREFIX).update(chunk).digest('hex');
}

/** segment = sha256(0x01 || u64(n) || u64(C) || leaves...), from the leaves (hex) of n bytes. */
export function segmentDigest(byteLength: number, chunkBytes: number, leaves: readonly string[]): string {
  const hash = createHash('sha256')
    .update(Buffer.from([0x01]))
    .update(u64(byteLength))
    .update(u64(chunkBytes));
  for (const leaf of leaves) hash.update(Buffer.from(leaf, 'hex'));
  return hash.digest('hex');
}

export interface Segment {
  readonly offset: number;
  readonly length: number;
  readonly digest: string;
}

/** file = sha256(0x02 || u64(size) || u64(C) || u64(m) || (u64(offset) || u64(length) || digest) per segment). */
export function fileTreeDigest(size: number, chunkBytes: number, segments: readonly Segment[]): string {
  const hash = createHash('sha256')
    .update(Buffer.from([0x02]))
    .update(u64(size))
    .update(u64(chunkBytes))
    .update(u64(segments.length));
  for (const segment of segments) hash.update(u64(segment.offset)).update(u64(segment.length)).update(Buffer.from(segment.digest, 'hex'));
  return hash.digest('hex');
}

/** The leaves of `data` (a segment's bytes from its start), one per chunk. */
export function leavesOf(data: Uint8Array, chunkBytes: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < data.byteLength; at += chunkBytes) out.push(leafDigest(data.subarray(at, Math.min(at + chunkBytes, data.byteLength))));
  return out;
}

/** The segment digest of bytes held in memory (a tensor read whole). */
export function treeDigestOf(data: Uint8Array, chunkBytes: number): string {
  return segmentDigest(data.byteLength, chunkBytes, leavesOf(data, chunkBytes));
}

/**
 * The segments of a file of `size` bytes, as [begin, end) ranges in order: cut at 0, at
 * `dataStart` (the end of the length prefix and header) and at every tensor's absolute begin and
 * end, empty ranges dropped. null `dataStart` (not a safetensors file): the whole file is one.
 */
export function fileSegments(
  size: number,
  dataStart: number | null,
  tensors: readonly { readonly begin: number; readonly end: number }[],
): { begin: number; end: number }[] {
  const cuts = new Set<number>([0, size]);
  if (dataStart !== null) {
    cuts.add(Math.min(dataStart, size));
    for (const tensor of tensors) {
      cuts.add(Math.min(dataStart + tensor.begin, size));
      cuts.add(Math.min(dataStart + tensor.end, size));
    }
  }
  const sorted = [...cuts].sort((a, b) => a - b);
  const out: { begin: number; end: number }[] = [];
  for (let i = 1; i < sorted.length; i++) out.push({ begin: sorted[i - 1] as number, end: sorted[i] as number });
  return out;
}

/**
 * A segment's digest computed from bytes that arrive in pieces (a tensor streamed to a
 * comparison, a file being written): one sha256 pass, leaf by leaf.
 */
export class TreeHasher {
  private leaf = createHash('sha256').update(LEAF_PREFIX);
  private inLeaf = 0;
  private total = 0;
  readonly leaves: string[] = [];

  constructor(readonly chunkBytes: number) {}

  update(data: Uint8Array): this {
    let at = 0;
    while (at < data.byteLength) {
      const take = Math.min(this.chunkBytes - this.inLeaf, data.byteLength - at);
      this.leaf.update(data.subarray(at, at + take));
      this.inLeaf += take;
      at += take;
      if (this.inLeaf === this.chunkBytes) this.closeLeaf();
    }
    this.total += data.byteLength;
    return this;
  }

  /** The segment digest of every byte given. */
  digest(): string {
    if (this.inLeaf > 0) this.closeLeaf();
    return segmentDigest(this.total, this.chunkBytes, this.leaves);
  }

  private closeLeaf(): void {
    this.leaves.push(this.leaf.digest('hex'));
    this.leaf = createHash('sha256').update(LEAF_PREFIX);
    this.inLeaf = 0;
  }
}

/** A digest of bytes arriving in pieces, in a bundle's scheme: update, then digest once. */
export interface StreamDigest {
  update(data: Uint8Array): unknown;
  digest(): string;
}

export function streamDigest(scheme: DigestScheme): StreamDigest {
  if (scheme.kind === 'tree') return new TreeHasher(scheme.chunkBytes);
  const hash = createHash('sha256');
  return { update: (data) => hash.update(data), digest: () => hash.digest('hex') };
}

/** A tensor's digest in a bundle's scheme, from its bytes in memory. */
export function tensorDigestOf(data: Uint8Array, scheme: DigestScheme): string {
  return scheme.kind === 'tree' ? treeDigestOf(data, scheme.chunkBytes) : createHash('sha256').update(data).digest('hex');
}

/** A chunk's digest in a bundle's scheme (a leaf of the tree, or the chunk's plain sha256). */
export function chunkDigestOf(chunk: Uint8Array, scheme: DigestScheme): string {
  return scheme.kind === 'tree' ? leafDigest(chunk) : createHash('sha256').update(chunk).digest('hex');
}

export interface HashedSegment extends Segment {
  readonly leaves: readonly string[];
}

/**
 * A file's tree digest computed as its bytes are written, in order, once: the bytes are cut into
 * segments at `cuts` (absolute offsets: the end of the header, every tensor's begin and end) and
 * each segment hashed leaf by leaf. What a writer uses, so a bundle's hashing is one pass.
 */
export class FileTreeHasher {
  private readonly cuts: number[];
  private segment: TreeHasher;
  private segmentStart = 0;
  private position = 0;
  readonly segments: HashedSegment[] = [];
  private readonly byRange = new Map<string, HashedSegment>();

  constructor(
    readonly chunkBytes: number,
    cuts: Iterable<number>,
  ) {
    this.cuts = [...new Set(cuts)].filter((cut) => cut > 0).sort((a, b) => a - b);
    this.segment = new TreeHasher(chunkBytes);
  }

  update(data: Uint8Array): void {
    let at = 0;
    while (at < data.byteLength) {
      const cut = this.cuts[0];
      const take = cut === undefined ? data.byteLength - at : Math.min(cut - this.position, data.byteLength - at);
      this.segment.update(data.subarray(at, at + take));
      at += take;
      this.position += take;
      if (cut !== undefined && this.position === cut) {
        this.cuts.shift();
        this.closeSegment();
      }
    }
  }

  /** The file's digest; `segments` then holds every segment with its digest and leaves. */
  digest(): string {
    this.closeSegment();
    return fileTreeDigest(this.position, this.chunkBytes, this.segments);
  }

  /** The segment [begin, end) (a tensor's bytes), once hashed; undefined when the range is no segment. */
  segmentAt(begin: number, end: number): HashedSegment | undefined {
    if (begin === end) return { offset: begin, length: 0, digest: segmentDigest(0, this.chunkBytes, []), leaves: [] };
    return this.byRange.get(`${begin}:${end}`);
  }

  private closeSegment(): void {
    if (this.position === this.segmentStart) return;
    const segment = { offset: this.segmentStart, length: this.position - this.segmentStart, digest: this.segment.digest(), leaves: this.segment.leaves };
    this.segments.push(segment);
    this.byRange.set(`${segment.offset}:${segment.offset + segment.length}`, segment);
    this.segment = new TreeHasher(this.chunkBytes);
    this.segmentStart = this.position;
  }
}
