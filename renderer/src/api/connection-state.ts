// How the renderer is connected to the core. The Electron preload is always "connected"; the
// WebSocket host moves through these states as the socket drops and comes back.
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting';

export type ConnectionListener = (state: ConnectionState, detail: string) => void;
