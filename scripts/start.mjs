// `npm start`: build, then open the desktop app on the embedded default — or, where Electron's
// binary is not installed (it is downloaded separately from the npm package, and some machines
// can reach only package registries), serve the same app to a browser instead.
// `npm run serve` (start.mjs --serve) always takes the serve-mode path.
// Arguments after the script go to the app (`electron . <args>`) or to `trace-inspector serve`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const forceServe = args[0] === '--serve';
const rest = forceServe ? args.slice(1) : args;

/**
 * The Electron executable if it is installed, else null. This mirrors what require('electron')
 * resolves (node_modules/electron/path.txt under dist/, or ELECTRON_OVERRIDE_DIST_PATH) without
 * calling it: since Electron 3x, require('electron') starts a download when the binary is
 * missing, which is exactly the case this script must handle quietly.
 */
function electronBinary() {
  let packageDir;
  try {
    packageDir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
  } catch {
    return null;
  }
  const pathFile = join(packageDir, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : null;
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  const binary = override ? join(override, relative || 'electron') : relative ? join(packageDir, 'dist', relative) : null;
  return binary !== null && existsSync(binary) ? binary : null;
}

/**
 * Runs a child attached to the terminal and exits with its code. Ctrl+C reaches the child
 * directly (the terminal signals the whole foreground group), so SIGINT is not forwarded — the
 * child would get it twice, and a second SIGINT means "stop now". SIGTERM and SIGHUP, which a
 * process manager sends to this process alone, are forwarded.
 */
function runAttached(command, commandArgs) {
  const child = spawn(command, commandArgs, { cwd: root, stdio: 'inherit' });
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`trace-inspector: could not start ${command}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const build = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const binary = forceServe ? null : electronBinary();
if (binary !== null) {
  runAttached(binary, ['.', ...rest]);
} else {
  if (!forceServe) {
    process.stderr.write(
      "Electron's binary is not installed here (node_modules/electron has no downloaded binary; `npx install-electron` fetches it where the network allows); starting serve mode instead\n",
    );
  }
  runAttached(process.execPath, [join(root, 'bin', 'trace-inspector.js'), 'serve', ...rest]);
}
