// Which folder may import which (docs/architecture.md draws the same picture). `npm test` runs
// `npm run deps`, which fails on any import that breaks one of these rules. Tests, scripts and
// examples are not checked: a test may reach into any layer.
//
//   renderer ──┐
//   preload ───┴─> protocol <── main/session, main/serve, main/electron, main/cli
//   main/electron -> main/cli, main/session -> main/core -> main/engine-host -> main/core/{bundle,tool}
//
// Paths are repository-relative, matched as regular expressions.
const OURS = '^(main|protocol|preload|renderer)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'protocol-imports-nothing-of-ours',
      comment:
        'protocol/ is the wire format shared by the renderer, the preload and the Node side (IPC and WebSocket): ' +
        'it may import only itself and npm packages (zod), so both ends of the wire build from the same files.',
      severity: 'error',
      from: { path: '^protocol/' },
      to: { path: OURS, pathNot: '^protocol/' },
    },
    {
      name: 'renderer-imports-only-protocol',
      comment: 'The renderer talks to the core only through the typed API: it imports its own files and protocol/.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: OURS, pathNot: '^(renderer|protocol)/' },
    },
    {
      name: 'preload-imports-only-protocol',
      comment: 'The Electron preload forwards the typed API: it imports its own files and protocol/.',
      severity: 'error',
      from: { path: '^preload/' },
      to: { path: OURS, pathNot: '^(preload|protocol)/' },
    },
    {
      name: 'renderer-no-node',
      comment: 'The renderer runs in a sandboxed page (Electron) or a browser (serve mode): no Node built-ins.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'core-knows-no-front-end',
      comment:
        'main/core is the library that the CLI, the session, serve mode and the app all call: it imports none of them, ' +
        'nor the wire format (protocol/: the session converts core values to wire values), nor Electron.',
      severity: 'error',
      from: { path: '^main/core/' },
      to: { path: '^(main/(session|cli|serve|electron)|protocol|preload|renderer)/' },
    },
    {
      name: 'engine-host-below-core',
      comment:
        'main/engine-host loads an engine (koffi, worker thread, host process) and writes what it records as a bundle: ' +
        'it may use the bundle format (main/core/bundle) and tool facts (main/core/tool), nothing that drives it ' +
        '(capture, gate, session, CLI, serve, Electron) and not the wire format.',
      severity: 'error',
      from: { path: '^main/engine-host/' },
      to: { path: OURS, pathNot: '^main/(engine-host|core/(bundle|tool))/' },
    },
    {
      name: 'bundle-format-below-engine-host',
      comment: 'main/core/bundle and main/core/tool are what the engine host builds on, so they never import it (no folder loop).',
      severity: 'error',
      from: { path: '^main/core/(bundle|tool)/' },
      to: { path: '^main/engine-host/' },
    },
    {
      name: 'session-knows-no-front-end',
      comment: 'main/session serves the app and serve mode alike: it imports neither of them, nor the CLI.',
      severity: 'error',
      from: { path: '^main/session/' },
      to: { path: '^main/(cli|serve|electron)/' },
    },
    {
      name: 'serve-and-cli-not-electron',
      comment: 'The CLI and serve mode run under plain Node: they never import the Electron main process.',
      severity: 'error',
      from: { path: '^main/(cli|serve)/' },
      to: { path: '^main/electron/' },
    },
    {
      name: 'only-electron-faces-import-electron',
      comment: 'Only the Electron main process (main/electron) and the preload import electron; everything else runs under plain Node or in a browser.',
      severity: 'error',
      from: { path: OURS, pathNot: '^(main/electron|preload)/' },
      // The resolved path of the electron package (a devDependency: the app is built, not installed).
      to: { path: '(^|/)node_modules/electron/' },
    },
    {
      name: 'no-circular',
      comment: 'A module cycle hides which of two files is the lower layer.',
      severity: 'error',
      from: { path: OURS },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'An import that resolves to nothing is a typo or a missing dependency. plotly.js is imported for its types only ' +
        '(@types/plotly.js); the code loads plotly.js-dist-min.',
      severity: 'error',
      from: { path: OURS },
      to: { couldNotResolve: true, pathNot: '^plotly\\.js$' },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript compiler API, so the TypeScript sources are parsed with swc.
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type from the wire format in the core is a dependency on it.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    exclude: { path: '^(out|dist)/' },
  },
};
