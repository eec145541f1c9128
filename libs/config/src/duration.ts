/** "5s", "5m", "2h", "7d", "250ms" (a bare number is seconds) in milliseconds, or null when it is not one. */
export function parseDuration(text: string): number | null {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const m = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h|d)?\s*$/.exec(text);
  return m ? Math.round(Number(m[1]) * units[m[2] ?? 's']) : null;
}
