// Listening to a PCM boundary: play reference / native / residual, a blind ABX test, a loop
// region, waveform and spectrogram, the objective metrics, and WAV export. The samples are
// fetched for this panel and held here (never in the store).
import { useEffect, useMemo, useState } from 'react';
import { useApiQuery } from '../../hooks/use-api-query.ts';
import { startAbx } from '../../store/actions/abx-actions.ts';
import { getState, useInspectorStore } from '../../store/inspector-store.ts';
import { selectRows, selectRowsVersion, selectSelectedRow } from '../../store/selectors.ts';
import { base64ToFloat32 } from '../../util/download.ts';
import { stopPlayback, type LoopRegion, type PlayKind } from './audio-player.ts';
import { AbxTrial } from './AbxTrial.tsx';
import { AudioMetricsView } from './AudioMetricsView.tsx';
import { LoopControls } from './LoopControls.tsx';
import { alignedResidual, sliceSeconds } from './pcm-math.ts';
import { isPcmRow, pcmBoundaries } from './pcm-boundaries.ts';
import { SpectrogramPlot } from './SpectrogramPlot.tsx';
import { usePlayback } from './use-playback.ts';
import { WaveformPlot } from './WaveformPlot.tsx';
import { WavExportButtons } from './WavExportButtons.tsx';

type Signal = 'reference' | 'native' | 'residual';

export function AudioPanel() {
  const rows = useInspectorStore(selectRows);
  const version = useInspectorStore(selectRowsVersion);
  const selectedRow = useInspectorStore(selectSelectedRow);
  const candidates = useMemo(() => pcmBoundaries(rows), [rows]);
  const [boundary, setBoundary] = useState(candidates[0] ?? '');
  // Selecting a PCM boundary in the table makes it the one to listen to.
  useEffect(() => {
    if (selectedRow !== null && isPcmRow(selectedRow)) setBoundary(selectedRow.boundary);
  }, [selectedRow]);
  // Rows arrive after the panel: follow them to a declared audio boundary.
  useEffect(() => {
    if (!candidates.includes(boundary) && candidates[0] !== undefined) setBoundary(candidates[0]);
  }, [candidates, boundary]);
  const declared = candidates.includes(boundary);
  useEffect(() => {
    if (declared && getState().abx.boundary !== boundary) startAbx(boundary);
  }, [boundary, declared]);
  useEffect(() => stopPlayback, []);

  // Only a declared audio boundary is asked for: an engine without audio asks nothing.
  const { data: audio, error, loading } = useApiQuery('getAudio', declared ? { boundary } : null, version);
  const current = audio !== null && audio.boundary === boundary ? audio : null;
  const signals = useMemo(() => {
    if (current === null) return null;
    const reference = base64ToFloat32(current.reference, 'getAudio reference');
    const native = base64ToFloat32(current.native, 'getAudio native');
    const residual = native.length === 0 ? new Float32Array(0) : alignedResidual(reference, native, current.metrics?.nullOffset ?? 0);
    return { reference, native, residual };
  }, [current]);

  const [region, setRegion] = useState<LoopRegion | null>(null);
  const [loop, setLoop] = useState(false);
  const [spectrumOf, setSpectrumOf] = useState<Signal>('reference');
  useEffect(() => setRegion(null), [boundary]);
  const { playing, start } = usePlayback();
  const spectrumSamples = useMemo(
    () => (signals === null || current === null ? new Float32Array(0) : sliceSeconds(signals[spectrumOf], current.sampleRate, region)),
    [signals, current, spectrumOf, region],
  );

  if (!declared) {
    return (
      <div className="audio-panel" data-testid="audio-panel">
        <div className="muted panel-note">the reference declares no audio boundary (a manifest's &quot;audio&quot; map names them with their sample rates)</div>
      </div>
    );
  }
  if (current === null || signals === null) {
    return (
      <div className="audio-panel" data-testid="audio-panel">
        <BoundaryPicker boundary={boundary} candidates={candidates} onChange={setBoundary} />
        {error !== null ? <div className="inline-error">{error}</div> : <div className="muted panel-note">{loading ? 'loading audio…' : ''}</div>}
      </div>
    );
  }

  const sampleRate = current.sampleRate;
  const duration = Math.max(signals.reference.length, signals.native.length) / sampleRate;
  const hasNative = signals.native.length > 0;
  // Non-looping playback plays just the region; looping plays the whole buffer and loops the region.
  const playSignal = (kind: PlayKind, samples: Float32Array<ArrayBuffer>): void => {
    if (loop && region !== null) start(kind, samples, sampleRate, region);
    else start(kind, sliceSeconds(samples, sampleRate, region), sampleRate, loop ? { start: 0, end: samples.length / sampleRate } : null);
  };
  const playAbx = (which: 'A' | 'B' | 'X'): void => {
    const side = which === 'X' ? getState().abx.currentX : which;
    playSignal(which === 'X' ? 'x' : side === 'A' ? 'reference' : 'native', side === 'A' ? signals.reference : signals.native);
  };

  return (
    <div className="audio-panel" data-testid="audio-panel">
      <div className="panel-toolbar">
        <BoundaryPicker boundary={boundary} candidates={candidates} onChange={setBoundary} />
        <span className="muted">
          {sampleRate} Hz · {signals.reference.length} ref / {signals.native.length} native samples · passes {current.passes.length}
        </span>
        <span className="spacer" />
        <WavExportButtons boundary={boundary} />
      </div>
      <div className="panel-toolbar">
        <button
          type="button"
          className={playing === 'reference' ? 'active' : ''}
          onClick={() => playSignal('reference', signals.reference)}
          data-testid="btn-play-reference"
        >
          ▶ reference
        </button>
        <button
          type="button"
          className={playing === 'native' ? 'active' : ''}
          disabled={!hasNative}
          onClick={() => playSignal('native', signals.native)}
          data-testid="btn-play-native"
        >
          ▶ native
        </button>
        <button
          type="button"
          className={playing === 'residual' ? 'active' : ''}
          disabled={!hasNative}
          onClick={() => playSignal('residual', signals.residual)}
          data-testid="btn-play-residual"
        >
          ▶ residual
        </button>
        <button type="button" disabled={playing === null} onClick={stopPlayback} data-testid="btn-stop-audio">
          ■ stop
        </button>
        <LoopControls duration={duration} region={region} loop={loop} onRegion={setRegion} onLoop={setLoop} />
      </div>
      <AbxTrial boundary={boundary} disabled={!hasNative} onPlay={playAbx} />
      <AudioMetricsView metrics={current.metrics} sampleRate={sampleRate} />
      <div className="audio-plots">
        <div className="audio-plot">
          <WaveformPlot
            reference={signals.reference}
            native={signals.native}
            residual={signals.residual}
            sampleRate={sampleRate}
            region={region}
            onRegion={setRegion}
          />
        </div>
        <div className="audio-plot">
          <div className="spectrum-choice">
            {(['reference', 'native', 'residual'] as const).map((signal) => (
              <label key={signal}>
                <input type="radio" name="spectrum-of" checked={spectrumOf === signal} onChange={() => setSpectrumOf(signal)} />
                {signal}
              </label>
            ))}
          </div>
          <SpectrogramPlot samples={spectrumSamples} sampleRate={sampleRate} label={spectrumOf} />
        </div>
      </div>
    </div>
  );
}

function BoundaryPicker({ boundary, candidates, onChange }: { boundary: string; candidates: readonly string[]; onChange: (boundary: string) => void }) {
  return (
    <label>
      PCM
      <select value={boundary} onChange={(event) => onChange(event.target.value)} data-testid="audio-boundary">
        {candidates.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}
