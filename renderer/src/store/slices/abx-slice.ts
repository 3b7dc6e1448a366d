// A blind ABX listening test of reference (A) against native (B) for one PCM boundary.
export type AbxSide = 'A' | 'B';

export interface AbxTrial {
  x: AbxSide;
  answer: AbxSide;
}

export interface AbxSlice {
  abx: {
    boundary: string | null;
    trials: AbxTrial[];
    /** What X is in the open trial; hidden from the UI until answered. */
    currentX: AbxSide;
  };
}

export const initialAbxSlice: AbxSlice = { abx: { boundary: null, trials: [], currentX: 'A' } };
