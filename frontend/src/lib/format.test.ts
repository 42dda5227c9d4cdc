import { describe, expect, it } from 'vitest';
import { parseEnv } from './env';
import { formatNumber, formatPercent, formatRatio, formatSigned } from './format';

describe('formatNumber', () => {
  it('keeps three significant digits, never more decimals than the unit resolves, and no -0', () => {
    expect(formatNumber(24068.3219)).toBe('24068');
    expect(formatNumber(58.8)).toBe('58.8');
    expect(formatNumber(0.0123456)).toBe('0.0123');
    expect(formatNumber(-0.000502, 'ms')).toBe('-0.001');
    expect(formatNumber(-0.000402, 'ms')).toBe('0');
    expect(formatNumber(0.04567, '%')).toBe('0.05');
    expect(formatNumber(245.678, 'MB')).toBe('246');
    expect(formatNumber(1.23456, 'MB')).toBe('1.2');
    expect(formatNumber(361)).toBe('361');
    expect(formatNumber(null)).toBe('—');
  });
  it('signs diffs and formats ratios and percentages', () => {
    expect(formatSigned(2.6)).toBe('+2.60');
    expect(formatSigned(0.0001, '%')).toBe('0');
    expect(formatSigned(-68)).toBe('-68');
    expect(formatRatio(41687.5741 / 24068.3219)).toBe('1.73×');
    expect(formatPercent(-18.836)).toBe('-18.8%');
  });
});

describe('parseEnv', () => {
  it('accepts nothing, a path or an http(s) URL and refuses anything else', () => {
    expect(parseEnv({}).apiBaseUrl).toBe('');
    expect(parseEnv({ VITE_API_BASE_URL: '/bench/' }).apiBaseUrl).toBe('/bench');
    expect(parseEnv({ VITE_API_BASE_URL: 'https://bt.example.org/' }).apiBaseUrl).toBe('https://bt.example.org');
    expect(() => parseEnv({ VITE_API_BASE_URL: 'ftp://x' })).toThrow(/http/);
    expect(() => parseEnv({ VITE_API_BASE_URL: 'not a url' })).toThrow(/not a URL/);
  });
});
