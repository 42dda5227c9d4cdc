/**
 * Flame graphs drawn with Plotly's bar trace (in the basic bundle: no extra chart code): every frame a
 * horizontal bar at its depth, starting where its parent's earlier children end, as wide as its value.
 * The root is on top (an icicle); children are laid out widest first.
 */
import type { Data } from 'plotly.js';

export interface FlameInput {
  id: number;
  parent: number | null;
  name: string;
  /** The bar's width (e.g. CPU-ms per 1,000 requests). */
  value: number;
  color: string;
  /** Lines of the hover label. */
  hover: string;
}

export interface FlameBar extends FlameInput {
  depth: number;
  start: number;
}

/** Each node's depth and start; a node whose parent is missing is left out with its subtree. */
export function layoutFlame(nodes: readonly FlameInput[]): FlameBar[] {
  const children = new Map<number, FlameInput[]>();
  let root: FlameInput | undefined;
  for (const n of nodes) {
    if (n.parent === null) root = n;
    else children.set(n.parent, [...(children.get(n.parent) ?? []), n]);
  }
  if (!root) return [];
  const out: FlameBar[] = [];
  const visit = (node: FlameInput, depth: number, start: number): void => {
    out.push({ ...node, depth, start });
    let at = start;
    for (const child of [...(children.get(node.id) ?? [])].sort((a, b) => b.value - a.value)) {
      visit(child, depth + 1, at);
      at += child.value;
    }
  };
  visit(root, 0, 0);
  return out;
}

/** The Plotly trace of a laid-out flame graph: one bar per frame, its name inside when it fits. */
export function flameTrace(bars: readonly FlameBar[]): Data[] {
  const total = bars.length ? bars[0].value : 0;
  return [
    {
      type: 'bar',
      orientation: 'h',
      y: bars.map((b) => b.depth),
      x: bars.map((b) => b.value),
      base: bars.map((b) => b.start),
      text: bars.map((b) => (total > 0 && b.value / total > 0.04 ? shortName(b.name) : '')),
      textposition: 'inside',
      insidetextanchor: 'start',
      textfont: { size: 10, color: '#111' },
      hovertext: bars.map((b) => b.hover),
      hoverinfo: 'text',
      marker: { color: bars.map((b) => b.color), line: { color: '#fff', width: 0.5 } },
      width: 0.95,
      cliponaxis: true,
    } as Data,
  ];
}

/** `pkg.Class.method` as `Class.method`, Go's `path/pkg.(*T).M` as `pkg.(*T).M`: the part that fits in a bar. */
export function shortName(name: string): string {
  const afterSlash = name.slice(name.lastIndexOf('/') + 1);
  const parts = afterSlash.split('.');
  const cls = parts.findIndex((p) => /^[A-Z(]/.test(p));
  return cls > 0 ? parts.slice(cls).join('.') : afterSlash;
}
