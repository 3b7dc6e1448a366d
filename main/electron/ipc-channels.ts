// Names shared by the main process and the preload bridge.
export const IPC_CHANNELS = {
  captureDefault: 'inspector:capture-default',
} as const;

/** First arguments that make `electron .` run a CLI command instead of opening a window. */
export const HEADLESS_COMMANDS: ReadonlySet<string> = new Set([
  'capture',
  '--gate',
  'gate',
  'verify',
  'keygen',
  'help',
  '--help',
  '--version',
]);
