// Requests are checked before they leave on both hosts; replies and events are validated once,
// where they are received: by validatingTransport for serve mode's socket, by the preload for
// Electron (so requestCheckingTransport passes them through untouched).
import { describe, expect, it } from 'vitest';
import { requestCheckingTransport, validatingTransport } from '../../renderer/src/api/validating-transport.ts';
import type { InspectorEvent, InspectorTransport } from '../../protocol/inspector-api.ts';

function recordingHost(response: unknown, events: unknown[] = []): InspectorTransport & { calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    calls,
    call: ((method: string, request: unknown) => {
      calls.push([method, request]);
      return Promise.resolve(response);
    }) as InspectorTransport['call'],
    subscribe(listener) {
      for (const event of events) listener(event as InspectorEvent);
      return () => undefined;
    },
  };
}

const BAD_ROWS = { rowsVersion: -1 };

describe('requestCheckingTransport (Electron: the preload validated the reply)', () => {
  it('refuses an invalid request before it leaves', async () => {
    const host = recordingHost({});
    await expect(requestCheckingTransport(host).call('getRows', { since: -3 })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(host.calls).toEqual([]);
  });

  it('hands the reply and events on as received, without parsing them again', async () => {
    const reply = { ...BAD_ROWS };
    const host = recordingHost(reply, [{ type: 'not-an-event' }]);
    const transport = requestCheckingTransport(host);
    await expect(transport.call('getRows', {})).resolves.toBe(reply);
    const seen: unknown[] = [];
    transport.subscribe((event) => seen.push(event));
    expect(seen).toEqual([{ type: 'not-an-event' }]);
  });
});

describe('validatingTransport (serve mode: the socket arrives here)', () => {
  it('refuses a response that breaks its schema and reports an event that does', async () => {
    const host = recordingHost(BAD_ROWS, [{ type: 'not-an-event' }]);
    const problems: string[] = [];
    const transport = validatingTransport(host, (message) => problems.push(message));
    await expect(transport.call('getRows', {})).rejects.toMatchObject({ code: 'invalid_response' });
    const seen: unknown[] = [];
    transport.subscribe((event) => seen.push(event));
    expect(seen).toEqual([]);
    expect(problems).toHaveLength(1);
    await expect(transport.call('getRows', { since: -3 })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});
