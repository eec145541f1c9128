import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';

/** One figure of the summary: a counter (reported as what it grew by, and per second) or a gauge (as it is). */
export type FlowFigure =
  | { label: string; counter: Counter<string>; where?: (labels: Partial<Record<string, string | number>>) => boolean }
  | { label: string; gauge: Gauge<string> };

async function total(
  metric: Counter<string> | Gauge<string>,
  where = (_: Partial<Record<string, string | number>>) => true,
) {
  const { values } = await metric.get();
  return values.filter((v) => where(v.labels)).reduce((n, v) => n + (Number.isFinite(v.value) ? v.value : 0), 0);
}

const n = (v: number) => Math.round(v).toLocaleString('en-US');
/** A rate: one decimal below 10/s, so 3 in 10 s reads 0.3/s rather than 0/s. */
const rate = (v: number) => (v < 10 ? v.toFixed(1) : n(v));

/**
 * Every `intervalMs`, one info line saying what flowed through the app since the last one, read from its own
 * metrics: `flow 10s: accepted 1,204 (120/s), refused 3, unavailable 0`. Nothing while nothing flows, so an idle
 * service stays quiet. Returns a stop function.
 */
export function startFlowSummary(logger: Logger, intervalMs: number, figures: FlowFigure[]): () => void {
  if (intervalMs <= 0) return () => undefined;
  let last: number[] | null = null;
  const tick = async () => {
    const now = await Promise.all(figures.map((f) => ('counter' in f ? total(f.counter, f.where) : total(f.gauge))));
    const before = last;
    last = now;
    if (!before) return;
    const grew = figures.map((f, i) => ('counter' in f ? now[i] - before[i] : 0));
    if (!grew.some((d) => d > 0)) return;
    const seconds = intervalMs / 1000;
    const parts = figures.map((f, i) =>
      'counter' in f
        ? `${f.label} ${n(grew[i])}${i === 0 || grew[i] >= seconds ? ` (${rate(grew[i] / seconds)}/s)` : ''}`
        : `${f.label} ${n(now[i])}`,
    );
    logger.info(`flow ${seconds}s: ${parts.join(', ')}`);
  };
  const timer = setInterval(() => void tick().catch(() => undefined), intervalMs);
  timer.unref();
  void tick();
  return () => clearInterval(timer);
}
