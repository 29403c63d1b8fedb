import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

interface Props<T> {
  items: readonly T[];
  /** Every row has this height in pixels (the list relies on it to place rows). */
  rowHeight: number;
  /** Renders one row's content. */
  render: (item: T, index: number) => ComponentChildren;
  /** Accessible name of the list. */
  label: string;
  /** Extra rows rendered above and below the visible ones. */
  overscan?: number;
}

/**
 * A list that renders only the rows in view, so tens of thousands of items cost about as
 * much as a screenful. The scroll container is focusable, so arrow keys, Page Up/Down,
 * Home and End scroll it from the keyboard.
 */
export function VirtualList<T>({ items, rowHeight, render, label, overscan = 8 }: Props<T>) {
  const viewport = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);

  useEffect(() => {
    const el = viewport.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  // A shorter list (after filtering) may leave the scroll position past its end.
  const total = items.length * rowHeight;
  const top = Math.min(scrollTop, Math.max(0, total - height));
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((top + height) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div
        key={i}
        class="vrow"
        role="listitem"
        aria-posinset={i + 1}
        aria-setsize={items.length}
        style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}
      >
        {render(items[i], i)}
      </div>,
    );
  }
  return (
    <div
      ref={viewport}
      class="vlist"
      tabIndex={0}
      role="list"
      aria-label={label}
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
    >
      <div class="vlist-inner" style={{ height: `${total}px` }}>
        {rows}
      </div>
    </div>
  );
}
