import { useState, type ReactElement } from 'react';

/** Copies the current URL (which holds the whole view state) and shows it, so it works without clipboard access too. */
export function CopyLinkButton(): ReactElement {
  const [link, setLink] = useState<string | null>(null);
  const copy = async (): Promise<void> => {
    const href = window.location.href;
    setLink(href);
    await navigator.clipboard?.writeText(href).catch(() => undefined);
  };
  return (
    <span className="copy-link">
      <button type="button" onClick={() => void copy()}>
        Copy link to this view
      </button>
      {link ? (
        <input aria-label="Permalink" readOnly value={link} size={Math.min(link.length, 60)} onFocus={(e) => e.target.select()} />
      ) : null}
    </span>
  );
}
