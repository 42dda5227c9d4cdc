/**
 * One colour per variant for every chart of a page: the run's variants in their stored order map to
 * a colour-blind-safe palette (Tableau 10), so "agent" is the same orange in bars, lines and spectra.
 */
const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#b279a2', '#eeca3b', '#9d755d', '#ff9da6', '#79706e'];

export function variantColors(names: readonly string[]): (name: string) => string {
  const order = [...new Set(names)];
  return (name) => {
    const i = order.indexOf(name);
    return PALETTE[(i < 0 ? order.length : i) % PALETTE.length];
  };
}
