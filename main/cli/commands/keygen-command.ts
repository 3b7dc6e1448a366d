// `trace-inspector keygen [--out <dir>]`: creates an Ed25519 key pair for signing receipts.
// Never overwrites a key (exit 2, thrown as InputError and printed by run-cli).
import { resolve } from 'node:path';
import { z } from 'zod';
import { ReceiptError } from '../../core/receipt/errors.ts';
import { defaultUserKeyPaths, generateKeyPair } from '../../core/receipt/keys.ts';
import { EXIT_OK, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';
import { InputError } from '../../core/io/input-error.ts';

export const KEYGEN_USAGE = `usage: trace-inspector keygen [--out <dir>]

Creates an Ed25519 key pair for signing gate receipts: <dir>/trace-inspector-ed25519.key
(private, PKCS#8 PEM, mode 0600) and <dir>/trace-inspector-ed25519.pub (public, SPKI PEM).
Default <dir>: your per-user key folder ($XDG_CONFIG_HOME/trace-inspector or
~/.config/trace-inspector), which the gate also creates on first use. Never overwrites a key.
`;

const KeygenArgsSchema = z.object({
  out: z.string().min(1, { error: '--out: expected a folder' }).optional(),
});

function parseKeygenArgs(argv: readonly string[]): z.infer<typeof KeygenArgsSchema> {
  return parseCommandArgs('keygen', argv, KeygenArgsSchema);
}

export async function runKeygenCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseKeygenArgs(argv);
  const outDir = args.out !== undefined ? resolve(io.cwd, args.out) : defaultUserKeyPaths(io.env).dir;
  let pair;
  try {
    pair = generateKeyPair(outDir);
  } catch (error) {
    if (error instanceof ReceiptError) throw new InputError(`keygen: ${error.message}`);
    throw error;
  }
  io.stdout(
    `private key ${pair.privateKeyPath} (mode 0600; keep it secret: it signs receipts)\n` +
      `public key  ${pair.publicKeyPath} (share it: trace-inspector verify <receipt> --pubkey ${pair.publicKeyPath})\n` +
      `keyid       ${pair.keyid}\n`,
  );
  return EXIT_OK;
}
