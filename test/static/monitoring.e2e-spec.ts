import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { GatewayMetrics } from '../../apps/gateway/src/metrics/gateway-metrics';
import { WorkerMetrics } from '../../apps/worker/src/metrics/worker-metrics';

// The dashboard and the alert rules under deploy/monitoring parse, their PromQL parses (Prometheus' own
// grammar), and they name only metrics and labels the two apps really export.

const dir = path.resolve(__dirname, '../../deploy/monitoring');
const rules = parse(readFileSync(path.join(dir, 'prometheus-rules.yaml'), 'utf8'));
const dashboard = JSON.parse(readFileSync(path.join(dir, 'grafana-dashboard.json'), 'utf8'));

async function exported(): Promise<Map<string, string[]>> {
  const names = new Map<string, string[]>();
  for (const registry of [new GatewayMetrics().registry, new WorkerMetrics().registry]) {
    for (const m of await registry.getMetricsAsJSON()) {
      const labels = [...new Set(m.values.flatMap((v) => Object.keys(v.labels)))];
      const declared = (registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] }).labelNames ?? [];
      const all = [...new Set([...labels, ...declared, 'le', 'app'])];
      names.set(m.name, all);
      if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.set(m.name + s, all);
    }
  }
  return names;
}

function promqlErrors(expr: string): string[] {
  const errors: string[] = [];
  const tree = parser.parse(expr.replace(/\$__rate_interval/g, '5m'));
  tree.iterate({ enter: (n) => void (n.type.isError && errors.push(`error at ${n.from} in: ${expr}`)) });
  return errors;
}

/** plant_store_* metric names in an expression, each with the label names its selector uses. */
function selectors(expr: string): { metric: string; labels: string[] }[] {
  return [...expr.matchAll(/(plant_store_[a-z_]+)(\{([^}]*)\})?/g)].map((m) => ({
    metric: m[1],
    labels: (m[3] ?? '')
      .split(',')
      .map((p) => p.split(/=~|!=|=/)[0].trim())
      .filter(Boolean),
  }));
}

const ruleExprs = (): string[] =>
  rules.groups.flatMap((g: { rules: { expr: string }[] }) => g.rules.map((r) => r.expr));
const panelExprs = (): string[] =>
  dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr));

describe('deploy/monitoring', () => {
  it('alerts on consumer lag, delivery failures, dead letters and 503s, each saying what to do', () => {
    const all = rules.groups.flatMap((g: { rules: unknown[] }) => g.rules) as {
      alert: string;
      expr: string;
      labels: { severity: string };
      annotations: { summary: string; description: string };
    }[];
    const exprs = all.map((r) => r.expr).join('\n');
    for (const m of ['plant_store_consumer_lag', 'outcome=~"retried|failed"', 'dead_lettered', 'status="503"'])
      expect(exprs).toContain(m);
    for (const r of all) {
      expect(r.alert).toMatch(/^PlantStore/);
      expect(['warning', 'critical']).toContain(r.labels.severity);
      expect(r.annotations.summary.length).toBeGreaterThan(10);
      expect(r.annotations.description.length).toBeGreaterThan(10);
    }
  });

  it('has PromQL that parses, in the rules and in every dashboard panel', () => {
    expect([...ruleExprs(), ...panelExprs()].flatMap(promqlErrors)).toEqual([]);
    expect(promqlErrors('sum(rate(plant_store_events_total[5m]) >')).not.toEqual([]); // the check can fail
  });

  it('names only metrics, and labels, that the apps export', async () => {
    const names = await exported();
    const unknown = [...ruleExprs(), ...panelExprs()]
      .flatMap(selectors)
      .flatMap(({ metric, labels }) =>
        !names.has(metric)
          ? [metric]
          : labels.filter((l) => !names.get(metric)!.includes(l)).map((l) => `${metric}{${l}}`),
      );
    expect(unknown).toEqual([]);
    expect(panelExprs().length).toBeGreaterThanOrEqual(8);
  });
});
