/**
 * Number display used by every table and chart label: three significant digits, never more decimals
 * than the unit resolves (1 µs for milliseconds, 0.01 for percent, 0.1 MB), and no "-0". Exports carry
 * the unrounded value.
 */
const MAX_DECIMALS: Record<string, number> = {
  ms: 3,
  s: 3,
  '%': 2,
  MB: 1,
  'req/s': 1,
  'CPU-s/1k req': 3,
  samples: 0,
};

function maxDecimals(unit: string | undefined): number {
  if (unit === undefined) return 4;
  if (unit in MAX_DECIMALS) return MAX_DECIMALS[unit];
  // JMH units: ms/op, us/op, ops/s, ... keep three decimals of the unit.
  return 3;
}

export function formatNumber(value: number | null | undefined, unit?: string): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const abs = Math.abs(value);
  if (abs === 0) return '0';
  if (Number.isInteger(value) && abs < 1e15) return String(value);
  const decimals = Math.min(Math.max(0, 2 - Math.floor(Math.log10(abs))), maxDecimals(unit));
  const text = value.toFixed(decimals);
  return Number(text) === 0 ? '0' : text;
}

export function formatSigned(value: number | null | undefined, unit?: string): string {
  const text = formatNumber(value, unit);
  if (value === null || value === undefined || Number.isNaN(value) || value <= 0 || text === '0') return text;
  return `+${text}`;
}

export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const text = Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(1);
  if (Number(text) === 0) return '0%';
  return `${value > 0 ? '+' : ''}${text}%`;
}

export function formatRatio(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `${value.toFixed(2)}×`;
}

export function formatWithUnit(value: number | null | undefined, unit: string): string {
  const text = formatNumber(value, unit);
  if (text === '—' || !unit) return text;
  return unit === '%' ? `${text}%` : `${text} ${unit}`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}
