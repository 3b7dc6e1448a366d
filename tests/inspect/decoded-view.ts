// A tensorView as the renderer receives it: checked against the API schema (buffer lengths
// included), then decoded with the renderer's own codec into plain arrays the tests can index.
import type { TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { tensorView } from '../../main/core/inspect/tensor-view-pooling.ts';
import { TensorViewSchema, type TensorView, type TensorViewRequest } from '../../protocol/inspector-api.ts';
import { decodeCells } from '../../protocol/tensor-view-codec.ts';

export type DecodedView = Omit<TensorView, 'values' | 'argmax'> & {
  /** NaN for a NaN cell or an empty one. */
  values: number[];
  /** Flat element index of each cell's max. */
  argmax: number[];
  wire: TensorView;
};

export function decodeView(wire: TensorView): DecodedView {
  const view = TensorViewSchema.parse(wire);
  const { values, flatIndex } = decodeCells(view);
  return { ...view, values: [...values], argmax: [...flatIndex], wire: view };
}

export async function pooledView(native: TraceBundle | null, reference: TraceBundle, request: TensorViewRequest): Promise<DecodedView> {
  return decodeView(await tensorView(native, reference, request));
}
