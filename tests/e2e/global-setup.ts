/**
 * Seeds the real stack through its public API, like the CLI does: a project per seed shape, real
 * tool output uploaded as runs, and waits until the worker has ingested every run.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { api, apiJson, fixture, ok, REPO, saveState, type Schemas, upload, waitForAnalysis, waitForRuns, XRAY_VERSIONS } from './support/api';
import { generateJtl } from './support/jtl';
import { startDemoTarget } from './support/target';

const XRAY_DATA = resolve(REPO, 'examples/data/aws-xray-java-agent');

const ENVIRONMENT = {
  name: 'm5.xlarge-al2',
  cpus: 4,
  memory_mb: 16384,
  instance_type: 'm5.xlarge',
  os: 'Amazon Linux 2',
  runtime: 'OpenJDK 17.0.15',
};

async function createProject(token: string, slug: string, name: string, description: string): Promise<void> {
  await ok(api(token).POST('/api/v1/projects', { body: { slug, name, description, is_public: true } }));
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  const token = process.env.BENCHTRAIL_E2E_ADMIN_TOKEN;
  if (!token) throw new Error('BENCHTRAIL_E2E_ADMIN_TOKEN is not set');
  const suffix = Date.now().toString(36);
  const project = `e2e-easeagent-${suffix}`;
  const heyProject = `e2e-router-${suffix}`;
  const jmhProject = `e2e-xray-${suffix}`;
  const planProject = `e2e-plans-${suffix}`;
  const alertProject = `e2e-alerts-${suffix}`;
  await createProject(token, project, `EaseAgent petclinic ${suffix}`, 'JMeter, baseline vs agent, thread groups 10/20/50');
  await createProject(token, heyProject, `Router ${suffix}`, 'hey, three router variants');
  await createProject(token, jmhProject, `X-Ray agent ${suffix}`, 'JMH, no/sdk/auto instrumentation');
  await createProject(token, planProject, `Plans ${suffix}`, 'hey runs started from the dashboard');
  await createProject(token, alertProject, `Alerts ${suffix}`, 'JMeter; the agent gets slower from 1.4.0 on');

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
  for (const version of XRAY_VERSIONS) {
    const files = ['no-instrumentation', 'sdk-instrumentation', 'auto-instrumentation'].map((variant) => ({
      name: `aws-xray-java-agent_${version}_${variant}.txt`,
      content: readFileSync(resolve(XRAY_DATA, `aws-xray-java-agent_${version}_${variant}.txt`)),
      spec: { variant, format: 'jmh-text' },
    }));
    const accepted = await upload(jmhProject, token, {
      environment: ENVIRONMENT, tool: 'jmh', agent_version: version, reference: 'no-instrumentation',
    }, files);
    jmhRuns[version] = accepted.run;
  }

  // Four versions with a light agent, then four with a heavy one: a step the change-point detector must alert on.
  const alertRuns: string[] = [];
  for (let i = 0; i < 8; i++) {
    const version = `1.${i}.0`;
    const start = Date.UTC(2026, 9, 1 + i, 12, 0, 0);
    const files = [
      { name: 'baseline.jtl', content: generateJtl({ seed: 500 + i, perSpanMs: 0, startMs: start, requestsPerThread: 20 }), spec: { variant: 'baseline', format: 'jmeter-csv' } },
      { name: 'agent.jtl', content: generateJtl({ seed: 900 + i, perSpanMs: i < 4 ? 0.3 : 4, startMs: start, requestsPerThread: 20 }), spec: { variant: 'agent', format: 'jmeter-csv' } },
    ];
    const accepted = await upload(alertProject, token, {
      environment: ENVIRONMENT, tool: 'jmeter', agent_version: version, reference: 'baseline',
      commit: `a1e47${i}`.padEnd(40, '0'), branch: 'main',
    }, files);
    // In order: each run's analysis sees the runs before it, as with a real release stream.
    await waitForRuns([accepted.run]);
    alertRuns.push(accepted.run);
  }

  // The stack's runner (pool "local", hey installed) runs this plan against a real local target.
  const target = await startDemoTarget();
  try {
    const plan = {
      version: 1, name: 'hey-quick', tool: 'hey', pool: 'local',
      variants: [{ name: 'target', role: 'reference', target: target.url, resources: { source: 'process' } }],
      scenarios: [{ name: 'ok', path: '/ok' }],
      loads: [{ concurrency: 2, requests: 200 }],
    };
    // A minute of load on the slow endpoint: long enough to be cancelled from the run page.
    const longPlan = { ...plan, name: 'hey-long', scenarios: [{ name: 'slow', path: '/slow' }],
      loads: [{ concurrency: 2, duration_s: 60 }] };
    for (const p of [plan, longPlan]) {
      // The API declares a plan body as any object (it is validated against the plan schema), so this goes untyped.
      await apiJson<Schemas['PlanOut']>(`/api/v1/projects/${planProject}/plans`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(p),
      }, token);
    }

    await waitForRuns([...jtlRuns, heyRun.run, ...Object.values(jmhRuns)]);
    await waitForAnalysis(alertRuns);
    // Added after the analysis has seen every run, so it marks the history without changing what was detected.
    await ok(api(token).POST('/api/v1/projects/{slug}/annotations', {
      params: { path: { slug: alertProject } },
      body: { kind: 'jdk', title: 'JDK 21 on the load host', agent_version: '1.6.0' },
    }));

    saveState({ project, heyProject, jmhProject, planProject, alertProject, alertRuns, plan: plan.name, targetUrl: target.url, jtlRuns,
      heyRun: heyRun.run, jmhRuns });
  } catch (err) {
    await target.stop();
    throw err;
  }
  return target.stop;
}
