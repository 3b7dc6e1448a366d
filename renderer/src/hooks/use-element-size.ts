// The size of an element, for asking the core for a pooled view that matches the pixels we have.
import { useEffect, useRef, useState, type RefObject } from 'react';

export function useElementSize<T extends HTMLElement>(): [RefObject<T | null>, { width: number; height: number }] {
  const ref = useRef<T>(null);
  const [size, setSize] = useState({ width: 0, height: 0 });
  useEffect(() => {
    const element = ref.current;
    if (element === null) return;
    let timer = 0;
    const measure = (): void => {
      const rect = element.getBoundingClientRect();
      setSize((previous) =>
        Math.abs(previous.width - rect.width) < 1 && Math.abs(previous.height - rect.height) < 1
          ? previous
          : { width: Math.floor(rect.width), height: Math.floor(rect.height) },
      );
    };
    measure();
    // Debounced: a resize drag must not send a new tensor request per pixel.
    const observer = new ResizeObserver(() => {
      window.clearTimeout(timer);
      timer = window.setTimeout(measure, 120);
    });
    observer.observe(element);
    return () => {
      window.clearTimeout(timer);
      observer.disconnect();
    };
  }, []);
  return [ref, size];
}
