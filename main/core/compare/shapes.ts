// Shape words shared by the comparator's messages: whether two shapes agree, and how one reads.

export const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((extent, i) => extent === b[i]);
export const shapeText = (shape: readonly number[]): string => `[${shape.join(', ')}]`;
