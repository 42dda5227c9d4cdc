/**
 * Seeds the real stack through its public API, like the CLI does: a project per seed shape, real
 * tool output uploaded as runs, and waits until the worker has ingested every run.
 */
import { apiJson, fixture, saveState, upload, waitForRuns, type E2EState } from './support/api';
import { generateJtl } from './support/jtl';

const ENVIRONMENT = {
  name: 'm5.xlarge-al2',
  cpus: 4,
  memory_mb: 16384,
  instance_type: 'm5.xlarge',
  os: 'Amazon Linux 2',
  runtime: 'OpenJDK 17.0.15',
};

async function createProject(token: string, slug: string, name: string, description: string): Promise<void> {
  await apiJson('/api/v1/projects', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ slug, name, description, is_public: true }),
  }, token);
}

export default async function globalSetup(): Promise<void> {
  const token = process.env.BENCHTRAIL_E2E_ADMIN_TOKEN;
  if (!token) throw new Error('BENCHTRAIL_E2E_ADMIN_TOKEN is not set');
  const suffix = Date.now().toString(36);
  const project = `e2e-easeagent-${suffix}`;
  const heyProject = `e2e-router-${suffix}`;
  const jmhProject = `e2e-xray-${suffix}`;
  await createProject(token, project, `EaseAgent petclinic ${suffix}`, 'JMeter, baseline vs agent, thread groups 10/20/50');
  await createProject(token, heyProject, `Router ${suffix}`, 'hey, three router variants');
  await createProject(token, jmhProject, `X-Ray agent ${suffix}`, 'JMH, no/sdk/auto instrumentation');

  const jtlRuns: string[] = [];
  for (const [i, version] of ['2.4.0', '2.5.0'].entries()) {
    const start = Date.UTC(2026, 10, 1 + i, 12, 0, 0);
    const files = [
      { name: 'baseline.jtl', content: generateJtl({ seed: 11 + i, perSpanMs: 0, startMs: start, requestsPerThread: 40 }), spec: { variant: 'baseline', format: 'jmeter-csv' } },
      { name: 'agent.jtl', content: generateJtl({ seed: 101 + i, perSpanMs: 1.5 + i, startMs: start, requestsPerThread: 40 }), spec: { variant: 'agent', format: 'jmeter-csv' } },
    ];
    const accepted = await upload(project, token, {
      environment: ENVIRONMENT, tool: 'jmeter', agent_version: version, app_version: 'petclinic-3.1',
      commit: `c0ffee${i}0000000000000000000000000000000a`.slice(0, 40), branch: 'main', reference: 'baseline',
      labels: { suite: 'petclinic' },
    }, files);
    jtlRuns.push(accepted.run);
  }

  const hey = (variant: string, file: string, concurrency: number) => ({
    name: file,
    content: fixture('hey-text', file),
    spec: { variant, format: 'hey-text', scenario: 'static', load: { kind: 'concurrency', value: concurrency } },
  });
  const heyRun = await upload(heyProject, token, {
    environment: { name: '4c-32g', cpus: 4, memory_mb: 32768, os: 'Linux', runtime: 'Go 1.18.7' },
    tool: 'hey', agent_version: 'feat-router', reference: 'ordered-v1',
  }, [
    hey('ordered-v1', 'hnakamur_ats-nginx-bad-request_hey_0accfc5.log', 50),
    hey('ordered-v1', 'akhastaf_webserver_hey_errors_4bbd90b.log', 100),
    hey('ordered-v2', 'hnakamur_ats-nginx-bad-request_hey_eedd742.log', 50),
    hey('ordered-v2', 'akhastaf_webserver_hey_5b486fa.log', 100),
    hey('radixtree', 'akhastaf_webserver_hey_5b486fa.log', 50),
    hey('radixtree', 'hnakamur_ats-nginx-bad-request_hey_0accfc5.log', 100),
  ]);

  const jmhRuns: Record<string, string> = {};
  for (const version of ['2.7.x', '2.8.x', '2.9.x']) {
    const files = ['no-instrumentation', 'sdk-instrumentation', 'auto-instrumentation'].map((variant) => ({
      name: `aws-xray-java-agent_${version}_${variant}.txt`,
      content: fixture('jmh-text', `aws-xray-java-agent_${version}_${variant}.txt`),
      spec: { variant, format: 'jmh-text' },
    }));
    const accepted = await upload(jmhProject, token, {
      environment: ENVIRONMENT, tool: 'jmh', agent_version: version, reference: 'no-instrumentation',
    }, files);
    jmhRuns[version] = accepted.run;
  }

  await waitForRuns([...jtlRuns, heyRun.run, ...Object.values(jmhRuns)]);
  saveState({ project, heyProject, jmhProject, jtlRuns, heyRun: heyRun.run, jmhRuns });
}
