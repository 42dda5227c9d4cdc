/**
 * Number display used by every table. Precision follows magnitude so that small latencies keep
 * their digits and large throughputs are not padded; exports carry the unrounded value.
 */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const abs = Math.abs(value);
  if (abs === 0) return '0';
  if (Number.isInteger(value) && abs < 1e15) return String(value);
  if (abs >= 100) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

export function formatSigned(value: number | null | undefined): string {
  const text = formatNumber(value);
  if (value === null || value === undefined || Number.isNaN(value) || value <= 0) return text;
  return `+${text}`;
}

export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const sign = value > 0 ? '+' : '';
  return `${sign}${value.toFixed(1)}%`;
}

export function formatRatio(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return `${value.toFixed(2)}×`;
}

export function formatWithUnit(value: number | null | undefined, unit: string): string {
  const text = formatNumber(value);
  if (text === '—' || !unit) return text;
  return unit === '%' ? `${text}%` : `${text} ${unit}`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}
