import { useMutation } from '@tanstack/react-query';
import { useState, type ReactElement } from 'react';
import { useNavigate } from 'react-router';
import { NeedsToken, WriteError } from '@/components/WriteNotice';
import { startRun } from '../api/queries';

/** Queues a run of the plan (optionally tagged with the versions under test) and opens its live page. */
export function StartRunForm({ slug, plan, version }: { slug: string; plan: string; version: number }): ReactElement {
  const navigate = useNavigate();
  const [agentVersion, setAgentVersion] = useState('');
  const [commit, setCommit] = useState('');
  const [branch, setBranch] = useState('');
  const start = useMutation({
    mutationFn: () =>
      startRun(slug, plan, {
        version,
        agent_version: agentVersion.trim() || undefined,
        commit: commit.trim() || undefined,
        branch: branch.trim() || undefined,
      }),
    onSuccess: (runSlug) => void navigate(`/r/${encodeURIComponent(runSlug)}`),
  });
  return (
    <form
      aria-label="Start run"
      className="form-grid"
      onSubmit={(e) => {
        e.preventDefault();
        start.mutate();
      }}
    >
      <label>
        Agent version
        <input value={agentVersion} onChange={(e) => setAgentVersion(e.target.value)} placeholder="optional" />
      </label>
      <label>
        Commit
        <input value={commit} onChange={(e) => setCommit(e.target.value)} placeholder="optional" />
      </label>
      <label>
        Branch
        <input value={branch} onChange={(e) => setBranch(e.target.value)} placeholder="optional" />
      </label>
      <button type="submit" disabled={start.isPending}>
        {start.isPending ? 'Starting…' : `Start run of version ${version}`}
      </button>
      <div style={{ flexBasis: '100%' }}>
        <NeedsToken role="uploader" action="Starting a run" />
        <WriteError error={start.error} action="Starting the run" />
      </div>
    </form>
  );
}
