// The one fact the engine-host process shares with its caller and its worker, kept in a module
// that imports nothing: the host process loads no schema library, so forking it costs a bare
// Node start (engine-host-process.ts).

/** The file descriptor of the engine-host process on which the worker's JSON lines arrive. */
export const HOST_PROCESS_MESSAGE_FD = 4;
