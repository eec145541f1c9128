import { existsSync } from 'node:fs';
import path from 'node:path';
import { gatewayEnvSchema, loadConfig, workerEnvSchema } from '@app/config';
import ipaddr from 'ipaddr.js';
import { K8sObject, render, renderWithKubectl } from '../../tools/harness/kustomize';

/* eslint-disable @typescript-eslint/no-require-imports -- each model loaded only when an object of its kind is met */
// The deploy folder, checked without a cluster: render each overlay, validate every object against the
// Kubernetes schemas (kubernetes-models), and assert the properties the deployment promises.
const MODELS: Record<string, () => { new (o: unknown): { validate(): void } }> = {
  'apps/v1/Deployment': () => require('kubernetes-models/apps/v1/Deployment').Deployment,
  'v1/Service': () => require('kubernetes-models/v1/Service').Service,
  'v1/ConfigMap': () => require('kubernetes-models/v1/ConfigMap').ConfigMap,
  'v1/Secret': () => require('kubernetes-models/v1/Secret').Secret,
  'autoscaling/v2/HorizontalPodAutoscaler': () =>
    require('kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler').HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': () => require('kubernetes-models/policy/v1/PodDisruptionBudget').PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': () =>
    require('kubernetes-models/networking.k8s.io/v1/NetworkPolicy').NetworkPolicy,
};
/* eslint-enable @typescript-eslint/no-require-imports */

const overlays = ['dev', 'prod'].map(
  (name) => [name, path.resolve(__dirname, '../../deploy/k8s/overlays', name)] as const,
);
const find = (objs: K8sObject[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`${kind}/${name} is missing`);
  return o as any; // eslint-disable-line @typescript-eslint/no-explicit-any
};

type Peer = { ipBlock?: { cidr: string; except?: string[] }; podSelector?: unknown; namespaceSelector?: unknown };
type EgressRule = { to?: Peer[]; ports?: { protocol?: string; port?: number }[] };
/** Whether a NetworkPolicy's egress rules let its pods open protocol/port to an address outside the cluster. */
function egressAllows(policy: { spec: { egress?: EgressRule[] } }, address: string, protocol: string, port: number) {
  const ip = ipaddr.parse(address);
  const inCidr = (cidr: string) => {
    const [range, bits] = ipaddr.parseCIDR(cidr);
    return range.kind() === ip.kind() && ip.match([range, bits]);
  };
  return (policy.spec.egress ?? []).some(
    (rule) =>
      (!rule.ports?.length ||
        rule.ports.some((p) => (p.protocol ?? 'TCP') === protocol && (p.port === undefined || p.port === port))) &&
      (!rule.to?.length ||
        // Pod and namespace selectors pick pods; an address outside the cluster is only reached by an ipBlock.
        rule.to.some((peer) => peer.ipBlock && inCidr(peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some(inCidr))),
  );
}
/** Instance metadata services (AWS, GCP, Azure, OpenStack; ECS tasks; AWS over IPv6; Alibaba). */
const METADATA = ['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200'];

const sortById = (objs: K8sObject[]) =>
  [...objs].sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`));

describe.each(overlays)('deploy/k8s overlay %s', (overlay, dir) => {
  const objects = render(dir);
  const deployment = (name: string) => find(objects, 'Deployment', `plant-store-${name}`);
  const configData = (names: string[]) =>
    Object.assign({}, ...names.map((n) => find(objects, 'ConfigMap', n).data)) as Record<string, string>;

  it('renders the same objects as kubectl kustomize, where kubectl is installed', () => {
    const fromKubectl = renderWithKubectl(dir);
    if (!fromKubectl) return console.warn('kubectl not installed: rendered with the built-in renderer only');
    expect(sortById(objects)).toEqual(sortById(fromKubectl));
  });

  it('validates every object against the Kubernetes schemas', () => {
    for (const o of objects) {
      const model = MODELS[`${o.apiVersion}/${o.kind}`];
      if (!model) throw new Error(`no schema for ${o.apiVersion}/${o.kind}`);
      const Model = model();
      expect(() => new Model(o).validate()).not.toThrow();
    }
  });

  it.each(['gateway', 'worker'])(
    'runs the %s non-root, without privileges, with probes, resources and a PDB',
    (app) => {
      const d = deployment(app);
      const pod = d.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(c.resources.requests).toBeDefined();
        expect(c.resources.limits).toBeDefined();
      }
      const main = pod.containers[0];
      expect(main.readinessProbe.httpGet.path).toBe('/readyz');
      expect(main.livenessProbe.httpGet.path).toBe('/healthz');
      expect(d.spec.template.metadata.annotations['prometheus.io/scrape']).toBe('true');
      expect(pod.topologySpreadConstraints[0].topologyKey).toBe('kubernetes.io/hostname');
      expect(find(objects, 'PodDisruptionBudget', `plant-store-${app}`).spec.selector.matchLabels).toEqual(
        d.spec.selector.matchLabels,
      );
      expect(main.image).toMatch(new RegExp(`^ghcr.io/plant-store/${app}:`));
    },
  );

  it('gives the gateway 2+ replicas, an HPA on CPU, and a grace period longer than preStop plus drain', () => {
    const d = deployment('gateway');
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'plant-store-gateway');
    expect(d.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    const drainMs = Number(configData(['plant-store-gateway']).SHUTDOWN_DRAIN_MS);
    const preStopMs = 10000;
    expect(d.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(drainMs + preStopMs);
    expect(d.spec.template.spec.containers[0].lifecycle.preStop).toBeDefined();
  });

  it('keeps worker replicas within the partitions of plant.created', () => {
    const partitions = Number(configData(['plant-store-shared']).PLANT_CREATED_PARTITIONS);
    expect(deployment('worker').spec.replicas).toBeLessThanOrEqual(partitions);
    // The init container runs the worker's setup entry: the build's output of a source file that exists
    // (dist/apps/worker/<source path>.js, as nest builds it), checked without needing a build.
    const [node, entry] = deployment('worker').spec.template.spec.initContainers[0].command;
    expect(node).toBe('node');
    expect(entry).toMatch(/^dist\/apps\/worker\/.+\.js$/);
    const source = entry.replace(/^dist\/apps\/worker\//, '').replace(/\.js$/, '.ts');
    expect(existsSync(path.resolve(__dirname, '../..', source))).toBe(true);
  });

  it.each([
    ['gateway', gatewayEnvSchema, ['plant-store-shared', 'plant-store-gateway']],
    ['worker', workerEnvSchema, ['plant-store-shared', 'plant-store-worker']],
  ] as const)('configures the %s only with variables its schema validates', (app, schema, maps) => {
    const keys = Object.keys(configData([...maps]));
    const known = Object.keys(schema.shape);
    expect(keys.filter((k) => !known.includes(k))).toEqual([]);
    const env = deployment(app).spec.template.spec.containers[0].envFrom;
    expect(env).toEqual(expect.arrayContaining([{ secretRef: { name: 'plant-store-secrets' } }]));
  });

  it('lets anyone reach the gateway HTTP port, and only Prometheus the metrics ports of either app', () => {
    const gw = find(objects, 'NetworkPolicy', 'plant-store-gateway');
    const wk = find(objects, 'NetworkPolicy', 'plant-store-worker');
    expect(gw.spec.ingress[0]).toEqual({ ports: [{ protocol: 'TCP', port: 3000 }] });
    expect(gw.spec.ingress[1].from[0].podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'prometheus' });
    expect(gw.spec.ingress[1].ports).toEqual([{ protocol: 'TCP', port: 9465 }]);
    expect(deployment('gateway').spec.template.metadata.annotations['prometheus.io/port']).toBe('9465');
    expect(wk.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(wk.spec.ingress.flatMap((r: any) => r.ports.map((p: any) => p.port))).toEqual([9464]); // eslint-disable-line
  });

  it.each(['gateway', 'worker'])('mounts no service-account token into the %s pods', (app) => {
    expect(deployment(app).spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it('binds the worker’s health and metrics port to the pod’s interfaces, which its probes need', () => {
    const worker = configData(['plant-store-shared', 'plant-store-worker']);
    expect(worker.WORKER_METRICS_HOST).toBe('0.0.0.0');
    expect(deployment('worker').spec.template.spec.containers[0].readinessProbe.httpGet.port).toBe('metrics');
  });

  it.each(['gateway', 'worker'])(
    'lets the %s reach subscribers, Kafka and DNS, but never a metadata service or link-local address',
    (app) => {
      const policy = find(objects, 'NetworkPolicy', `plant-store-${app}`);
      expect(policy.spec.policyTypes).toContain('Egress');
      const probes = [
        ['TCP', 80],
        ['TCP', 443],
        ['TCP', 8775],
        ['UDP', 53],
        ['TCP', 53],
      ] as const;
      const reached = [
        ...METADATA.flatMap((a) => probes.map(([protocol, port]) => [a, protocol, port] as const)),
        // the rest of link-local, on any TCP port (DNS may use a link-local node cache)
        ...['169.254.1.1', 'fe80::1'].flatMap((a) =>
          probes.filter(([, p]) => p !== 53).map(([pr, p]) => [a, pr, p] as const),
        ),
      ].filter(([a, protocol, port]) => egressAllows(policy, a, protocol, port));
      expect(reached).toEqual([]);
      expect(egressAllows(policy, '203.0.113.10', 'TCP', 443)).toBe(true); // a subscriber
      expect(egressAllows(policy, '2001:db8::10', 'TCP', 443)).toBe(true);
      expect(egressAllows(policy, '10.20.0.5', 'TCP', 9092)).toBe(true); // a broker outside the cluster
      expect(egressAllows(policy, '10.96.0.10', 'UDP', 53)).toBe(true); // cluster DNS
      expect(egressAllows(policy, '169.254.20.10', 'UDP', 53)).toBe(true); // NodeLocal DNSCache
    },
  );

  if (overlay === 'prod') {
    it('uses replication 3 and min.insync.replicas 2, and ships no example Secret', () => {
      const shared = configData(['plant-store-shared']);
      expect(shared.KAFKA_REPLICATION_FACTOR).toBe('3');
      expect(shared.KAFKA_MIN_INSYNC_REPLICAS).toBe('2');
      expect(shared.KAFKA_BROKERS.split(',')).toHaveLength(3);
      expect(objects.some((o) => o.kind === 'Secret')).toBe(false);
    });
  } else {
    it('marks the Secret it ships as an example', () => {
      expect(find(objects, 'Secret', 'plant-store-secrets').metadata.annotations['plant.store/example']).toMatch(
        /replace/,
      );
    });

    it.each([
      ['gateway', gatewayEnvSchema, ['WEBHOOK_TOKENS', 'ADMIN_TOKENS', 'SECRETS_KEY']],
      ['worker', workerEnvSchema, ['SECRETS_KEY']],
    ] as const)(
      'ships credentials that the %s refuses to start with, saying how to make real ones',
      (app, schema, keys) => {
        const secret = find(objects, 'Secret', 'plant-store-secrets').stringData as Record<string, string>;
        const env = { ...configData(['plant-store-shared', `plant-store-${app}`]), ...secret };
        let message = '';
        try {
          loadConfig(schema, env);
        } catch (err) {
          message = (err as Error).message;
        }
        for (const key of keys) expect(message).toMatch(new RegExp(`${key}: .*(openssl rand|base64)`));
      },
    );
  }
});
