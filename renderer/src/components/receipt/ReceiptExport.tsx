// Export a signed receipt (DSSE over an in-toto statement) of the session as it stands — the
// gate's for a live run, compare's for a run opened from a bundle: the seals, where it was
// written, the signer, and the envelope to download.
import { useState, type FormEvent } from 'react';
import type { ReceiptExport as ReceiptExportResult } from '../../../../protocol/inspector-api.ts';
import { attempt } from '../../store/actions/attempt.ts';
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectSessionBarFields } from '../../store/selectors.ts';
import { downloadBlob } from '../../util/download.ts';

export function ReceiptExport({ onVerify }: { onVerify: (envelope: string, publicKeyPem: string) => void }) {
  const [keyPath, setKeyPath] = useState('');
  const [result, setResult] = useState<ReceiptExportResult | null>(null);
  const [running, setRunning] = useState(false);
  const openedRun = useInspectorStore((state) => selectSessionBarFields(state).openedRun);
  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    setRunning(true);
    const exported = await attempt('export receipt', 'exportReceipt', { keyPath: keyPath.trim() === '' ? null : keyPath.trim() });
    setRunning(false);
    if (exported !== null) setResult(exported);
  };
  const fileName = result === null ? '' : (result.path.split(/[\\/]/).pop() ?? 'receipt.dsse.json');
  return (
    <section className="receipt-export">
      <form className="panel-toolbar" onSubmit={(event) => void submit(event)}>
        <span className="panel-title">export</span>
        <input
          type="text"
          value={keyPath}
          placeholder="Ed25519 private key PEM path (empty: the session's key)"
          spellCheck={false}
          aria-label="signing key path"
          data-testid="receipt-key-path"
          onChange={(event) => setKeyPath(event.target.value)}
        />
        <button type="submit" disabled={running} data-testid="btn-export-receipt">
          {running ? 'Exporting…' : 'Export receipt'}
        </button>
      </form>
      <div className="muted" data-testid="receipt-what">
        {openedRun !== null
          ? 'signs a compare of the open bundle and the opened run, with the contracts file, map file and oracle in force (subjects: both manifests and those files)'
          : 'signs a gate run of the open engine on the open bundle, with the run options and contracts in force'}
      </div>
      {result !== null ? (
        <div className="receipt-result" data-testid="receipt-export-result" data-overall={result.overall} data-fidelity={result.fidelity}>
          <div>
            <span className={`seal seal-${result.overall.toLowerCase()}`}>OVERALL {result.overall}</span>{' '}
            <span className={`seal seal-${result.fidelity.toLowerCase()}`}>FIDELITY {result.fidelity}</span>
          </div>
          <pre className="seals" data-testid="receipt-seals">
            {result.seals.join('\n')}
          </pre>
          <div className="muted">
            written to <code>{result.path}</code> · key id <code>{result.keyId}</code>
          </div>
          <div className="receipt-actions">
            <button
              type="button"
              onClick={() => downloadBlob(fileName, new Blob([result.envelope], { type: 'application/json' }))}
              data-testid="btn-download-receipt"
            >
              Download envelope
            </button>
            <button type="button" onClick={() => onVerify(result.envelope, result.publicKeyPem)} data-testid="btn-verify-exported">
              Verify this receipt
            </button>
            <button type="button" onClick={() => downloadBlob('receipt-signer.pub.pem', new Blob([result.publicKeyPem], { type: 'application/x-pem-file' }))}>
              Download public key
            </button>
          </div>
          <details>
            <summary>public key</summary>
            <pre>{result.publicKeyPem}</pre>
          </details>
        </div>
      ) : null}
    </section>
  );
}
