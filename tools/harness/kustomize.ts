import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

// A small kustomize for the features deploy/k8s uses (resources, namespace, images, strategic-merge patches
// with named-list merging and `$patch: delete`), so the manifests can be rendered and checked on a machine
// without kubectl. Where kubectl is installed, the test renders with it too and compares.
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
};

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);

const readYaml = (file: string): K8sObject[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJSON())
    .filter(Boolean);

const idOf = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;

export function render(dir: string): K8sObject[] {
  const k = readYaml(path.join(dir, 'kustomization.yaml'))[0] as unknown as Record<string, unknown>;
  const unsupported = Object.keys(k).filter((key) => !SUPPORTED.has(key));
  if (unsupported.length) throw new Error(`${dir}: kustomization fields not supported here: ${unsupported.join(', ')}`);
  let objects: K8sObject[] = [];
  for (const r of (k.resources as string[]) ?? []) {
    const p = path.join(dir, r);
    objects.push(...(statSync(p).isDirectory() ? render(p) : readYaml(p)));
  }
  for (const { path: patchPath } of (k.patches as { path: string }[]) ?? []) {
    for (const patch of readYaml(path.join(dir, patchPath))) {
      const i = objects.findIndex((o) => idOf(o) === idOf(patch));
      if (i < 0) throw new Error(`patch ${patchPath} targets ${idOf(patch)}, which does not exist`);
      if ((patch as Record<string, unknown>).$patch === 'delete') objects.splice(i, 1);
      else objects[i] = merge(objects[i], patch) as K8sObject;
    }
  }
  if (k.namespace) {
    objects = objects.map((o) =>
      CLUSTER_SCOPED.has(o.kind) ? o : { ...o, metadata: { ...o.metadata, namespace: k.namespace as string } },
    );
  }
  for (const img of (k.images as { name: string; newName?: string; newTag?: string }[]) ?? []) {
    objects = objects.map((o) => retag(o, img) as K8sObject);
  }
  return objects;
}

/** Strategic merge: maps merge, lists of objects with a `name` merge by name, other lists are replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch)) {
    const named = (l: unknown[]) => l.every((x) => x && typeof x === 'object' && 'name' in (x as object));
    if (!named(base) || !named(patch)) return patch;
    const out = [...base] as { name: string }[];
    for (const p of patch as { name: string }[]) {
      const i = out.findIndex((b) => b.name === p.name);
      if (i < 0) out.push(p);
      else out[i] = merge(out[i], p) as { name: string };
    }
    return out;
  }
  if (base && patch && typeof base === 'object' && typeof patch === 'object' && !Array.isArray(patch)) {
    const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
    for (const [key, value] of Object.entries(patch)) out[key] = key in out ? merge(out[key], value) : value;
    return out;
  }
  return patch;
}

function retag(node: unknown, img: { name: string; newName?: string; newTag?: string }): unknown {
  if (Array.isArray(node)) return node.map((n) => retag(n, img));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'image' && typeof value === 'string') {
      const [name, tag] = value.split(':');
      out[key] =
        name === img.name ? `${img.newName ?? name}${(img.newTag ?? tag) ? `:${img.newTag ?? tag}` : ''}` : value;
    } else out[key] = retag(value, img);
  }
  return out;
}

/** kubectl's own rendering, when kubectl is on this machine; null otherwise. */
export function renderWithKubectl(dir: string): K8sObject[] | null {
  const kubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find(existsSync);
  if (!kubectl) return null;
  const out = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJSON());
}
