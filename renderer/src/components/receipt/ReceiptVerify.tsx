// Verify a receipt envelope (pasted or loaded from a file), optionally against a given signer's
// public key: every check with its outcome.
import { useEffect, useState, type ChangeEvent } from 'react';
import type { ReceiptVerify as ReceiptVerifyResult } from '../../../../protocol/inspector-api.ts';
import { attempt } from '../../store/actions/attempt.ts';
import { errorMessage, pushLocalError } from '../../store/actions/error-actions.ts';

function loadInto(setter: (text: string) => void, what: string) {
  return (event: ChangeEvent<HTMLInputElement>): void => {
    const file = event.target.files?.[0];
    if (file === undefined) return;
    file.text().then(setter, (error: unknown) => pushLocalError(`load ${what}`, `${file.name}: ${errorMessage(error)}`));
    // Let the same file be chosen again after editing.
    event.target.value = '';
  };
}

interface ReceiptVerifyProps {
  envelope: string;
  publicKeyPem: string;
  setEnvelope: (text: string) => void;
  setPublicKeyPem: (text: string) => void;
}

export function ReceiptVerify({ envelope, publicKeyPem, setEnvelope, setPublicKeyPem }: ReceiptVerifyProps) {
  const [result, setResult] = useState<ReceiptVerifyResult | null>(null);
  const [running, setRunning] = useState(false);
  // A result belongs to the text it verified: editing either input clears it.
  useEffect(() => setResult(null), [envelope, publicKeyPem]);
  const verify = async (): Promise<void> => {
    setRunning(true);
    const verified = await attempt('verify receipt', 'verifyReceipt', { envelope, publicKeyPem: publicKeyPem.trim() === '' ? null : publicKeyPem });
    setRunning(false);
    setResult(verified);
  };
  return (
    <section className="receipt-verify">
      <div className="panel-toolbar">
        <span className="panel-title">verify</span>
        <label className="file-button">
          load envelope…
          <input type="file" accept=".json,application/json" onChange={loadInto(setEnvelope, 'envelope')} data-testid="receipt-envelope-file" />
        </label>
        <label className="file-button">
          load public key…
          <input type="file" accept=".pem" onChange={loadInto(setPublicKeyPem, 'public key')} data-testid="receipt-pubkey-file" />
        </label>
        <button type="button" disabled={running || envelope.trim() === ''} onClick={() => void verify()} data-testid="btn-verify-receipt">
          {running ? 'Verifying…' : 'Verify'}
        </button>
      </div>
      <div className="receipt-inputs">
        <textarea
          value={envelope}
          placeholder="DSSE envelope JSON"
          spellCheck={false}
          onChange={(event) => setEnvelope(event.target.value)}
          data-testid="receipt-envelope"
        />
        <textarea
          value={publicKeyPem}
          placeholder="signer public key (SPKI PEM); empty: the session's key"
          spellCheck={false}
          onChange={(event) => setPublicKeyPem(event.target.value)}
          data-testid="receipt-public-key"
        />
      </div>
      {result !== null ? (
        <div className={`verify-result ${result.ok ? 'ok' : 'fail'}`} data-testid="receipt-verify-result" data-ok={result.ok ? 'true' : 'false'}>
          <div className="verify-message">
            <b>{result.ok ? 'VERIFIED' : 'NOT VERIFIED'}</b> {result.message}
          </div>
          <ul>
            {result.checks.map((check, index) => (
              <li key={`${check.name}-${index}`} className={check.ok ? 'ok' : 'fail'}>
                <span className="check-mark">{check.ok ? '✓' : '✗'}</span> {check.name} <span className="muted">{check.detail}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
