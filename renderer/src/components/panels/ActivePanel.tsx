// The open detail panel. Only the active one is mounted, so only it fetches.
import { useInspectorStore } from '../../store/inspector-store.ts';
import { selectActivePanel } from '../../store/selectors.ts';
import { AudioPanel } from '../audio/AudioPanel.tsx';
import { LayerIsolationPanel } from '../isolation/LayerIsolationPanel.tsx';
import { ProvenancePanel } from '../provenance/ProvenancePanel.tsx';
import { ReceiptPanel } from '../receipt/ReceiptPanel.tsx';
import { SpecialsPanel } from '../specials/SpecialsPanel.tsx';
import { TensorPanel } from '../tensor/TensorPanel.tsx';

export function ActivePanel() {
  const panel = useInspectorStore(selectActivePanel);
  switch (panel) {
    case 'tensor':
      return <TensorPanel />;
    case 'specials':
      return <SpecialsPanel />;
    case 'isolation':
      return <LayerIsolationPanel />;
    case 'audio':
      return <AudioPanel />;
    case 'provenance':
      return <ProvenancePanel />;
    case 'receipt':
      return <ReceiptPanel />;
  }
}
