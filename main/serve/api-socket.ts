// One WebSocket connection to the API: CallFrames in, ReplyFrames out. Every inbound frame is
// parsed with zod before anything acts on it. A frame that names a call id but is otherwise
// wrong gets an error reply for that id and the connection stays usable; a frame that cannot
// even name a call (binary, not JSON, no id) is a protocol violation and closes the connection
// with the reason, since there is nothing to reply to.
import { z } from 'zod';
import type { RawData, WebSocket } from 'ws';
import { CallFrameSchema, type InspectorEvent, type ReplyFrame } from '../../protocol/inspector-api.ts';
import type { DispatchResult } from '../session/dispatch-call.ts';

/** What runCall (main/session) returns: it validates method and request, never throws; the page validates the reply. */
export type DispatchOutcome = DispatchResult;

/** The core as serve mode needs it: injected, so the server is testable with any real core. */
export interface ServeCore {
  dispatch(method: string, request: unknown): Promise<DispatchOutcome>;
  subscribe(listener: (event: InspectorEvent) => void): () => void;
}

/** WebSocket close codes (RFC 6455): unsupported data, invalid payload. */
const CLOSE_UNSUPPORTED = 1003;
const CLOSE_INVALID = 1007;

const FrameIdSchema = z.object({ id: z.number().int().nonnegative() });

/** Close reasons are limited to 123 bytes. */
function closeReason(text: string): string {
  return Buffer.byteLength(text) <= 123
    ? text
    : `${Buffer.from(text)
        .subarray(0, 120)
        .toString('utf8')
        .replace(/\uFFFD+$/, '')}...`;
}

function issuesText(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'frame'}: ${issue.message}`).join('; ');
}

function send(socket: WebSocket, reply: ReplyFrame): void {
  if (socket.readyState !== socket.OPEN) return;
  let text: string;
  try {
    text = JSON.stringify(reply);
  } catch (error) {
    text = JSON.stringify({
      id: reply.id,
      ok: false,
      error: { code: 'internal', message: `the reply could not be encoded: ${(error as Error).message}` },
    } satisfies ReplyFrame);
  }
  socket.send(text);
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

async function handleFrame(socket: WebSocket, core: ServeCore, data: RawData, isBinary: boolean): Promise<void> {
  if (isBinary) {
    socket.close(CLOSE_UNSUPPORTED, 'binary frames are not accepted: send CallFrames as JSON text');
    return;
  }
  const text = rawText(data);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    socket.close(CLOSE_INVALID, closeReason(`frame is not JSON: ${(error as Error).message}`));
    return;
  }
  const frame = CallFrameSchema.safeParse(json);
  if (!frame.success) {
    const id = FrameIdSchema.safeParse(json);
    if (!id.success) {
      socket.close(CLOSE_INVALID, closeReason(`frame has no call id: ${issuesText(frame.error)}`));
      return;
    }
    send(socket, { id: id.data.id, ok: false, error: { code: 'bad_frame', message: `bad call frame: ${issuesText(frame.error)}` } });
    return;
  }
  const { id, method, request } = frame.data;
  let outcome: DispatchOutcome;
  try {
    outcome = await core.dispatch(method, request);
  } catch (error) {
    // dispatchCall promises never to throw; if it ever does, the caller still gets an answer.
    outcome = { ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
  }
  send(socket, outcome.ok ? { id, ok: true, response: outcome.response } : { id, ok: false, error: outcome.error });
}

export function attachApiSocket(socket: WebSocket, core: ServeCore, log: (line: string) => void): void {
  socket.on('message', (data, isBinary) => {
    handleFrame(socket, core, data, isBinary).catch((error: unknown) => {
      log(`serve: a call failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  // A socket error (reset, oversized frame) ends this connection only; ws closes it.
  socket.on('error', (error) => log(`serve: WebSocket error: ${error.message}`));
}
