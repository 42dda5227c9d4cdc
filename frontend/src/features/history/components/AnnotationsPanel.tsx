import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactElement } from 'react';
import type { AnnotationOut } from '@/api/client';
import { Badge } from '@/components/StateViews';
import { NeedsToken, WriteError } from '@/components/WriteNotice';
import { formatDateTime } from '@/lib/format';
import { annotationsQuery, createAnnotation, deleteAnnotation, updateAnnotation, type AnnotationFields } from '../api/queries';

const KINDS = ['release', 'jdk', 'infra', 'other'] as const;

/** datetime-local wants "YYYY-MM-DDTHH:MM" in local time; the API speaks ISO 8601 with a zone. */
function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function fromLocalInput(value: string): string | null {
  return value ? new Date(value).toISOString() : null;
}

function AnnotationForm({
  initial,
  submitLabel,
  onSubmit,
  onCancel,
  pending,
}: {
  initial?: AnnotationOut;
  submitLabel: string;
  onSubmit: (fields: AnnotationFields) => void;
  onCancel?: () => void;
  pending: boolean;
}): ReactElement {
  const [kind, setKind] = useState<AnnotationFields['kind']>((initial?.kind as AnnotationFields['kind']) ?? 'release');
  const [title, setTitle] = useState(initial?.title ?? '');
  const [version, setVersion] = useState(initial?.agent_version ?? '');
  const [at, setAt] = useState(toLocalInput(initial?.at));
  const [known, setKnown] = useState(initial?.known_change ?? false);
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    onSubmit({ kind, title, agent_version: version || null, at: fromLocalInput(at), known_change: known });
  };
  return (
    <form className="form-grid" aria-label={initial ? `Edit annotation ${initial.title}` : 'New annotation'} onSubmit={submit}>
      <label>
        Kind
        <select value={kind} onChange={(e) => setKind(e.target.value as AnnotationFields['kind'])}>
          {KINDS.map((k) => (
            <option key={k}>{k}</option>
          ))}
        </select>
      </label>
      <label>
        Title
        <input required maxLength={300} value={title} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <label>
        Agent version
        <input value={version} maxLength={100} onChange={(e) => setVersion(e.target.value)} placeholder="e.g. 2.5.0" />
      </label>
      <label>
        or time
        <input type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)} />
      </label>
      <label className="inline">
        <input type="checkbox" checked={known} onChange={(e) => setKnown(e.target.checked)} /> Known change (never alerted)
      </label>
      <button type="submit" disabled={pending || !title || (!version && !at)}>
        {submitLabel}
      </button>
      {onCancel ? (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </form>
  );
}

/** The project's annotations (releases, JDK changes, infra events): listed, added, edited, deleted (uploader role). */
export function AnnotationsPanel({ slug, annotations }: { slug: string; annotations: readonly AnnotationOut[] }): ReactElement {
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<number | null>(null);
  const refresh = (): Promise<void> => queryClient.invalidateQueries({ queryKey: annotationsQuery(slug).queryKey });
  const create = useMutation({ mutationFn: (f: AnnotationFields) => createAnnotation(slug, f), onSuccess: refresh });
  const update = useMutation({
    mutationFn: ({ id, f }: { id: number; f: AnnotationFields }) => updateAnnotation(slug, id, f),
    onSuccess: async () => {
      setEditing(null);
      await refresh();
    },
  });
  const remove = useMutation({ mutationFn: (id: number) => deleteAnnotation(slug, id), onSuccess: refresh });
  return (
    <section aria-labelledby="annotations-h">
      <h2 id="annotations-h">Annotations</h2>
      <p className="muted">
        Drawn as dotted lines on every chart at their agent version (or time). A known change is drawn as a change point
        but never alerted.
      </p>
      <NeedsToken role="uploader" action="Adding, editing or deleting an annotation" />
      {annotations.length === 0 ? <p>No annotations yet.</p> : null}
      <ul className="annotations">
        {annotations.map((a) => (
          <li key={a.id} aria-label={`Annotation ${a.title}`}>
            {editing === a.id ? (
              <AnnotationForm
                initial={a}
                submitLabel="Save"
                pending={update.isPending}
                onSubmit={(f) => update.mutate({ id: a.id, f })}
                onCancel={() => setEditing(null)}
              />
            ) : (
              <>
                <Badge tone="info">{a.kind}</Badge> <strong>{a.title}</strong>{' '}
                <span className="muted">
                  {a.agent_version ? `at version ${a.agent_version}` : `at ${formatDateTime(a.at)}`}
                  {a.known_change ? ' · known change' : ''}
                </span>{' '}
                <button type="button" onClick={() => setEditing(a.id)} aria-label={`Edit annotation ${a.title}`}>
                  Edit
                </button>{' '}
                <button
                  type="button"
                  onClick={() => {
                    if (window.confirm(`Delete the annotation "${a.title}"?`)) remove.mutate(a.id);
                  }}
                  aria-label={`Delete annotation ${a.title}`}
                  disabled={remove.isPending}
                >
                  Delete
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      <h3>Add an annotation</h3>
      <AnnotationForm submitLabel="Add annotation" pending={create.isPending} onSubmit={(f) => create.mutate(f)} />
      <WriteError error={create.error} action="Adding the annotation" />
      <WriteError error={update.error} action="Saving the annotation" />
      <WriteError error={remove.error} action="Deleting the annotation" />
    </section>
  );
}
