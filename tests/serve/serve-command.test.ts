// `trace-inspector serve` with the real core: the command opens the embedded default in a real
// InspectorSession, serves it, prints exactly one URL line, answers calls from the session over
// the WebSocket, broadcasts its events, and shuts down cleanly. The spawned case runs the
// installed command (bin -> dist/cli.js) against the built renderer and stops it with SIGINT.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventFrameSchema, INSPECTOR_METHODS, ReplyFrameSchema } from '../../protocol/inspector-api.ts';
import { runServeCommand } from '../../main/cli/commands/serve-command.ts';
import type { CliIO } from '../../main/cli/cli-io.ts';
import { CLI, REPO_ROOT, freshTempDir } from '../helpers/paths.ts';
import { collectFrames, makeRendererDir, openSocket, rawGet, waitFor } from './serve-fixture.ts';
import { InputError } from '../../main/core/io/input-error.ts';

function captureIO(cwd: string): CliIO & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (text) => out.push(text), stderr: (text) => err.push(text), stderrIsTTY: false, cwd, env: {} };
}

describe('trace-inspector serve (in process, real session)', () => {
  it('serves the embedded default: one URL line, calls answered by the session, events broadcast, clean stop', async () => {
    const { rendererDir } = makeRendererDir();
    const work = freshTempDir('serve-work');
    const io = captureIO(work);
    let checked = false;
    const code = await runServeCommand(['--port', '0', '--work', 'runs'], io, {
      rendererDir,
      untilStopped: async (server) => {
        expect(io.out).toEqual([`${server.url}\n`]);
        expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
        expect((await rawGet({ port: server.port, path: `/?token=${server.token}` })).status).toBe(200);
        const opened = await openSocket(`ws://127.0.0.1:${server.port}/api?token=${server.token}`);
        if (!('socket' in opened)) throw new Error(`refused: ${opened.body}`);
        const frames = collectFrames(opened.socket);
        opened.socket.send(JSON.stringify({ id: 1, method: 'getSession', request: {} }));
        const reply = ReplyFrameSchema.parse(await waitFor(() => frames.find((frame) => ReplyFrameSchema.safeParse(frame).success), 'getSession'));
        if (!reply.ok) throw new Error(reply.error.message);
        const snapshot = INSPECTOR_METHODS.getSession.response.parse(reply.response);
        expect(snapshot.engine?.library).toMatch(/libti_reference\.so$/);
        expect(snapshot.bundle?.caseId).toBe('interleaved');
        expect(snapshot.workDir).toBe(join(work, 'runs'));
        // A call that changes the session is answered and broadcast as a snapshot event.
        opened.socket.send(JSON.stringify({ id: 2, method: 'setTeacherForce', request: { on: true } }));
        const event = await waitFor(
          () =>
            frames
              .map((frame) => EventFrameSchema.safeParse(frame))
              .find((parsed) => parsed.success && parsed.data.event.type === 'snapshot' && parsed.data.event.snapshot.teacherForce)?.data,
          'a snapshot event with teacher forcing on',
        );
        expect(event.event.type).toBe('snapshot');
        expect(ReplyFrameSchema.parse(await waitFor(() => frames.find((frame) => (frame as { id?: number }).id === 2), 'reply 2')).ok).toBe(true);
        // The session's own validation answers a bad request over the wire.
        opened.socket.send(JSON.stringify({ id: 3, method: 'openEngine', request: { library: '' } }));
        const bad = ReplyFrameSchema.parse(await waitFor(() => frames.find((frame) => (frame as { id?: number }).id === 3), 'the error reply'));
        expect(bad.ok).toBe(false);
        opened.socket.close();
        checked = true;
      },
    });
    expect(checked).toBe(true);
    expect(code).toBe(0);
    expect(io.err.join('')).toContain('stopping');
  });

  it('refuses bad flags (an InputError: runCli prints it and exits 2)', async () => {
    const { rendererDir } = makeRendererDir();
    for (const [args, message] of [
      [['--port', '70000'], /^serve: --port: expected 0\.\.65535$/],
      [['--port', 'http'], /^serve: --port: expected a port number$/],
      [['--bogus'], /^serve: Unknown option '--bogus'/],
    ] as const) {
      const io = captureIO(freshTempDir('serve-flags'));
      await expect(runServeCommand(args, io, { rendererDir, untilStopped: async () => {} })).rejects.toThrow(InputError);
      await expect(runServeCommand(args, io, { rendererDir, untilStopped: async () => {} })).rejects.toThrow(message);
    }
  });

  it('exits 2 without serving when the engine on its command line cannot be opened, or the renderer is not built', async () => {
    const { rendererDir } = makeRendererDir();
    const io = captureIO(freshTempDir('serve-bad'));
    expect(await runServeCommand(['--engine', 'missing-engine.so', '--work', 'runs'], io, { rendererDir, untilStopped: async () => {} })).toBe(2);
    expect(io.out).toEqual([]);
    expect(io.err.join('')).toMatch(/^trace-inspector serve: cannot open --engine missing-engine\.so: /);
    const unbuilt = captureIO(freshTempDir('serve-unbuilt'));
    expect(await runServeCommand([], unbuilt, { rendererDir: join(freshTempDir('serve-empty'), 'renderer'), untilStopped: async () => {} })).toBe(2);
    expect(unbuilt.out).toEqual([]);
    expect(unbuilt.err.join('')).toMatch(/the built renderer is missing .*run `npm run build` first/);
  });
});

describe('trace-inspector serve: SIGINT', () => {
  it('closes the connections, the session and its engine host on SIGINT, and the process exits 0 by itself', async () => {
    const { rendererDir } = makeRendererDir();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'tests', 'serve', 'serve-signal-child.ts'), rendererDir, '--port', '0', '--work', freshTempDir('serve-signal')],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const line = await waitFor(() => (stdout.includes('\n') ? stdout : undefined), 'the URL line', 60_000);
    const match = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]{43})\n$/.exec(line);
    expect(match, `${line} / ${stderr}`).not.toBeNull();
    const opened = await openSocket(`ws://127.0.0.1:${match?.[1]}/api?token=${match?.[2]}`);
    if (!('socket' in opened)) throw new Error(`refused: ${opened.body}`);
    const closed = new Promise<number>((resolve) => opened.socket.once('close', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await closed).toBe(1001);
    expect(await exited).toBe(0);
    expect(stdout).toBe(line);
    expect(stderr).toContain('trace-inspector serve: stopping');
  });
});

const builtRenderer = join(REPO_ROOT, 'out', 'renderer', 'index.html');

describe('trace-inspector serve (the installed command)', () => {
  it('prints exactly one line, the URL, serves the built renderer, and exits 0 on SIGINT', async () => {
    expect(existsSync(builtRenderer), `${builtRenderer} missing: run npm run build`).toBe(true);
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--work', freshTempDir('serve-cli')], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const line = await waitFor(() => (stdout.includes('\n') ? stdout : undefined), `the URL line (stderr: ${stderr})`, 60_000);
      const match = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]{43})\n$/.exec(line);
      expect(match, line).not.toBeNull();
      const port = Number(match?.[1]);
      const page = await rawGet({ port, path: `/?token=${match?.[2]}` });
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toContain(`ws://127.0.0.1:${port}`);
      expect((await rawGet({ port, path: '/' })).status).toBe(403);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(stdout.split('\n').filter((line) => line.length > 0)).toHaveLength(1);
  });
});
