// Signed receipts: export one for this session, verify any (the one just exported in one click).
import { useState } from 'react';
import { ReceiptExport } from './ReceiptExport.tsx';
import { ReceiptVerify } from './ReceiptVerify.tsx';

export function ReceiptPanel() {
  const [envelope, setEnvelope] = useState('');
  const [publicKeyPem, setPublicKeyPem] = useState('');
  return (
    <div className="receipt-panel" data-testid="receipt-panel">
      <ReceiptExport
        onVerify={(exported, key) => {
          setEnvelope(exported);
          setPublicKeyPem(key);
        }}
      />
      <ReceiptVerify envelope={envelope} publicKeyPem={publicKeyPem} setEnvelope={setEnvelope} setPublicKeyPem={setPublicKeyPem} />
    </div>
  );
}
