import { z } from 'zod';
import { gatewayEnvSchema, workerEnvSchema } from './env.schema';

/** One variable as the schema defines it, for generated references (.env.example). */
export interface EnvEntry {
  name: string;
  app: 'gateway' | 'worker' | 'both';
  /** The default as it would be written in the environment; `required` has none; `unset` is optional. */
  default: string | 'required' | 'unset';
}

/** Reads the default out of the schema's wrappers (pipes, defaults, optionals), as text an env file holds. */
function defaultOf(type: z.ZodType): EnvEntry['default'] {
  for (let node: unknown = type; node;) {
    const def = (node as { _zod: { def: Record<string, unknown> } })._zod.def;
    if ('defaultValue' in def) {
      const value = def.defaultValue;
      return Array.isArray(value) ? value.join(',') : String(value);
    }
    if (def.type === 'optional') return 'unset';
    node = def.in ?? def.innerType;
  }
  return 'required';
}

/** Every variable either app reads, in allEnvKeys order, with which app reads it and its default. */
export function envReference(): EnvEntry[] {
  const gateway = gatewayEnvSchema.shape as Record<string, z.ZodType>;
  const worker = workerEnvSchema.shape as Record<string, z.ZodType>;
  return [...new Set([...Object.keys(gateway), ...Object.keys(worker)])].sort().map((name) => ({
    name,
    app: name in gateway && name in worker ? 'both' : name in gateway ? 'gateway' : 'worker',
    default: defaultOf(gateway[name] ?? worker[name]),
  }));
}
