// WAV files of the reference, the native output and the null residual, written by the core.
import { attempt } from '../../store/actions/attempt.ts';
import { downloadBlob, wireBytes } from '../../util/download.ts';

const SIDES = ['reference', 'native', 'residual'] as const;

export function WavExportButtons({ boundary }: { boundary: string }) {
  const exportWav = async (side: (typeof SIDES)[number]): Promise<void> => {
    const file = await attempt(`export ${side} WAV`, 'exportWav', { boundary, side });
    if (file !== null) downloadBlob(file.fileName, new Blob([wireBytes(file.bytes, 'exportWav bytes')], { type: 'audio/wav' }));
  };
  return (
    <span className="wav-export">
      <span className="muted">WAV</span>
      {SIDES.map((side) => (
        <button key={side} type="button" onClick={() => void exportWav(side)} data-testid={`btn-wav-${side}`}>
          {side}
        </button>
      ))}
    </span>
  );
}
