import { useState, type ReactElement } from 'react';
import { apiUrl } from '@/api/client';

/**
 * Links to a chart drawn on the server (SVG and PNG, usable without the dashboard) and a button that
 * copies the Markdown that embeds it, e.g. in a README. `path` is the image's API path without its
 * extension, e.g. `/api/v1/compare/chart`; `query` its query string.
 */
export function ChartImageLinks({ path, query = '', alt }: { path: string; query?: string; alt: string }): ReactElement {
  const [copied, setCopied] = useState<string | null>(null);
  const url = (ext: 'svg' | 'png'): string =>
    new URL(apiUrl(`${path}.${ext}${query ? `?${query}` : ''}`), window.location.href).href;
  const markdown = `![${alt.replace(/[[\]]/g, '')}](${url('svg')})`;
  const copy = async (): Promise<void> => {
    setCopied(markdown);
    await navigator.clipboard?.writeText(markdown).catch(() => undefined);
  };
  return (
    <p className="chart-image-links">
      Image: <a href={url('svg')}>SVG</a> · <a href={url('png')}>PNG</a> ·{' '}
      <button type="button" onClick={() => void copy()} aria-label={`Copy Markdown for the image of ${alt}`}>
        Copy Markdown
      </button>
      {copied ? (
        <input aria-label={`Markdown for the image of ${alt}`} readOnly value={copied} size={Math.min(copied.length, 60)} onFocus={(e) => e.target.select()} />
      ) : null}
    </p>
  );
}
