// Fixed-row-height virtualisation: from the scroller's scrollTop and height, the slice of rows
// that can be seen (plus a little overscan so fast scrolling does not show blanks).
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';

const OVERSCAN_ROWS = 12;

export interface VirtualWindow {
  scrollerRef: RefObject<HTMLDivElement | null>;
  first: number;
  last: number;
  onScroll: () => void;
  /** Scrolls the minimum needed to bring row `index` fully into view. */
  reveal: (index: number) => void;
  pageRows: number;
}

export function useVirtualWindow(rowCount: number, rowHeight: number): VirtualWindow {
  const scrollerRef = useRef<HTMLDivElement>(null);
  const [viewport, setViewport] = useState({ top: 0, height: 600 });
  const frame = useRef(0);

  const measure = useCallback(() => {
    const scroller = scrollerRef.current;
    if (scroller === null) return;
    setViewport((previous) =>
      previous.top === scroller.scrollTop && previous.height === scroller.clientHeight ? previous : { top: scroller.scrollTop, height: scroller.clientHeight },
    );
  }, []);

  useEffect(() => {
    const scroller = scrollerRef.current;
    if (scroller === null) return;
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(scroller);
    return () => observer.disconnect();
  }, [measure]);

  // One state update per animation frame, however many scroll events arrive.
  const onScroll = useCallback(() => {
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(measure);
  }, [measure]);

  const reveal = useCallback(
    (index: number) => {
      const scroller = scrollerRef.current;
      if (scroller === null || index < 0) return;
      const top = index * rowHeight;
      const bottom = top + rowHeight;
      if (top < scroller.scrollTop) scroller.scrollTop = top;
      else if (bottom > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = bottom - scroller.clientHeight;
      measure();
    },
    [rowHeight, measure],
  );

  const first = Math.max(0, Math.floor(viewport.top / rowHeight) - OVERSCAN_ROWS);
  const last = Math.min(rowCount, Math.ceil((viewport.top + viewport.height) / rowHeight) + OVERSCAN_ROWS);
  return { scrollerRef, first, last, onScroll, reveal, pageRows: Math.max(1, Math.floor(viewport.height / rowHeight)) };
}
