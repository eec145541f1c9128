// Parsers for option values: each turns what was typed into what the API takes, or refuses it as a usage error
// (exit 2, the expected form named) before anything is sent.
import { InvalidArgumentError } from 'commander';

export const integer = (v: string) => {
  if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError('a whole number');
  return Number(v);
};
/** A limit: a positive number, or `none` to remove it (the API checks the bounds and says what is wrong). */
export const limit = (v: string): number | null => {
  if (v === 'none') return null;
  if (!/^\d+(\.\d+)?$/.test(v) || Number(v) <= 0) throw new InvalidArgumentError('a positive number, or none');
  return Number(v);
};
export const time = (v: string) => {
  const d = /^\d+[smhd]$/.test(v) ? new Date(Date.now() - ms(v)) : new Date(v);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('an RFC 3339 time, or an age like 30m, 2h, 1d');
  return d.toISOString();
};
const UNIT_MS = { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 };
export const ms = (v: string) => Number(v.slice(0, -1)) * UNIT_MS[v.slice(-1) as keyof typeof UNIT_MS];
export const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** A repeatable `Name: value` option, collected into an object. */
export const header = (v: string, into: Record<string, string> = {}) => {
  const colon = v.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError("'Name: value', like 'X-Team: plants'");
  return { ...into, [v.slice(0, colon).trim()]: v.slice(colon + 1).trim() };
};
export const collect = (v: string, into: string[] = []) => [...into, v];
