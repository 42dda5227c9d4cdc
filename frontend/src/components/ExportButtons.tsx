import { useState, type ReactElement } from 'react';
import { toCsv, toJson, toMarkdown, type TableModel } from '@/lib/table';

function download(filename: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function safeFilename(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'table';
}

export function ExportButtons({ model, filename }: { model: TableModel; filename: string }): ReactElement {
  const [copied, setCopied] = useState(false);
  const base = safeFilename(filename);
  const copyMarkdown = async (): Promise<void> => {
    await navigator.clipboard?.writeText(toMarkdown(model)).catch(() => undefined);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div className="export" role="group" aria-label={`Export ${model.title}`}>
      <button type="button" onClick={() => download(`${base}.csv`, toCsv(model), 'text/csv')}>
        CSV
      </button>
      <button type="button" onClick={() => download(`${base}.json`, toJson(model), 'application/json')}>
        JSON
      </button>
      <button type="button" onClick={() => download(`${base}.md`, toMarkdown(model), 'text/markdown')}>
        Markdown
      </button>
      <button type="button" onClick={() => void copyMarkdown()}>
        {copied ? 'Copied' : 'Copy Markdown'}
      </button>
    </div>
  );
}
