// "Where did the first NaN / infinity appear?" over the whole run, in execution order: selects
// that boundary and element, so the bit inspector shows it at once.
import { useState } from 'react';
import type { FirstSpecial } from '../../../../protocol/inspector-api.ts';
import { api } from '../../api/inspector-client.ts';
import { errorMessage, pushLocalError } from '../../store/actions/error-actions.ts';
import { revealBoundary } from '../../store/actions/selection-actions.ts';

export function FirstSpecialButtons() {
  const [note, setNote] = useState<string | null>(null);
  const find = async (kind: 'nan' | 'inf'): Promise<void> => {
    const label = kind === 'nan' ? 'NaN' : 'infinity';
    // Not `attempt`: null is a real answer here ("none"), distinct from a failed call.
    let found: FirstSpecial;
    try {
      found = await api.call('findFirstSpecial', { kind });
    } catch (error) {
      pushLocalError(`find the first ${label}`, errorMessage(error));
      return;
    }
    if (found === null) {
      setNote(`No ${label} in any boundary compared so far.`);
      return;
    }
    setNote(`First ${label}: pass ${found.pass} ${found.boundary} element ${found.flatIndex} (${found.side})`);
    revealBoundary({ pass: found.pass, boundary: found.boundary }, found.flatIndex, 'specials');
  };
  return (
    <div className="first-special">
      <button type="button" onClick={() => void find('nan')} data-testid="btn-first-nan">
        first NaN
      </button>
      <button type="button" onClick={() => void find('inf')} data-testid="btn-first-inf">
        first inf
      </button>
      {note !== null ? (
        <span className="muted" data-testid="first-special-result">
          {note}
        </span>
      ) : null}
    </div>
  );
}
