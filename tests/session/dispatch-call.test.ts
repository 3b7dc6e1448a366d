// dispatchCall is what both hosts call with untrusted bytes: an unknown method or a payload that
// breaks the method's schema is refused with E_REQUEST naming the field, a handler's failure
// keeps its code, a response the schema rejects is never sent, and nothing ever throws.
import { afterAll, describe, expect, it } from 'vitest';
import { dispatchCall, runCall } from '../../main/session/inspector-session.ts';
import { INSPECTOR_METHODS, InspectorCallError, type InspectorHandlers } from '../../protocol/inspector-api.ts';
import { openSession, removeTempDirs } from './session-fixtures.ts';

afterAll(() => removeTempDirs());

describe('dispatchCall', () => {
  const t = openSession('dispatch');
  afterAll(() => t.session.close());

  it('the session implements every method of INSPECTOR_METHODS', () => {
    expect(Object.keys(t.session.handlers).sort()).toEqual(Object.keys(INSPECTOR_METHODS).sort());
  });

  it('answers a valid call with the response its schema accepts', async () => {
    const result = await dispatchCall(t.session.handlers, 'getSession', {});
    expect(result.ok).toBe(true);
    if (result.ok) expect(INSPECTOR_METHODS.getSession.response.safeParse(result.response).success).toBe(true);
  });

  it('refuses an unknown method, naming it', async () => {
    for (const method of ['deleteEverything', 'constructor', '__proto__', '']) {
      const result = await dispatchCall(t.session.handlers, method, {});
      expect(result).toEqual({ ok: false, error: { code: 'E_REQUEST', message: `method: unknown method ${JSON.stringify(method)}` } });
    }
  });

  it('refuses a bad payload, naming the field', async () => {
    const library = await dispatchCall(t.session.handlers, 'openEngine', { library: 3 });
    expect(library.ok).toBe(false);
    if (!library.ok) {
      expect(library.error.code).toBe('E_REQUEST');
      expect(library.error.message).toMatch(/^openEngine: request\.library: /);
    }
    const limit = await dispatchCall(t.session.handlers, 'getSpecials', { pass: 0, boundary: 'x', limit: 0 });
    expect(!limit.ok && limit.error.message).toMatch(/request\.limit/);
    const window = await dispatchCall(t.session.handlers, 'getTensorView', {
      pass: 0,
      boundary: 'x',
      metric: 'abs_diff',
      maxRows: 8,
      maxCols: 8,
      window: { row0: -1, row1: 1, col0: 0, col1: 1 },
    });
    expect(!window.ok && window.error.message).toMatch(/request\.window\.row0/);
    const extra = await dispatchCall(t.session.handlers, 'prefill', { now: true });
    expect(!extra.ok && extra.error.code).toBe('E_REQUEST');
    const missing = await dispatchCall(t.session.handlers, 'step', undefined);
    expect(!missing.ok && missing.error.code).toBe('E_REQUEST');
  });

  it('keeps a handler failure code and message; a thrown non-call error becomes E_INTERNAL', async () => {
    const noBundle = await dispatchCall(t.session.handlers, 'prefill', {});
    expect(noBundle).toMatchObject({ ok: false, error: { code: 'E_STATE' } });
    const broken = { ...t.session.handlers, getSession: () => Promise.reject(new TypeError('boom')) } as InspectorHandlers;
    expect(await dispatchCall(broken, 'getSession', {})).toEqual({ ok: false, error: { code: 'E_INTERNAL', message: 'boom' } });
    const refusing = { ...t.session.handlers, getSession: () => Promise.reject(new InspectorCallError('E_BUSY', 'later')) } as InspectorHandlers;
    expect(await dispatchCall(refusing, 'getSession', {})).toEqual({ ok: false, error: { code: 'E_BUSY', message: 'later' } });
  });

  it('never sends a response its schema rejects', async () => {
    const lying = { ...t.session.handlers, getRows: () => Promise.resolve({ rowsVersion: -1, rows: [] }) } as unknown as InspectorHandlers;
    const result = await dispatchCall(lying, 'getRows', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'E_RESPONSE' } });
    expect(!result.ok && result.error.message).toMatch(/response\.rowsVersion/);
  });

  it('runCall (the Electron host, whose preload validates replies) checks the request but leaves the response to the receiver', async () => {
    const lying = { ...t.session.handlers, getRows: () => Promise.resolve({ rowsVersion: -1, rows: [] }) } as unknown as InspectorHandlers;
    expect(await runCall(lying, 'getRows', {})).toEqual({ ok: true, response: { rowsVersion: -1, rows: [] } });
    expect(await runCall(lying, 'getRows', { since: 'yesterday' })).toMatchObject({ ok: false, error: { code: 'E_REQUEST' } });
    expect(await runCall(lying, 'dropTables', {})).toMatchObject({ ok: false, error: { code: 'E_REQUEST' } });
  });
});
