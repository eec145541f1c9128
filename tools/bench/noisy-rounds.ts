// The runs of npm run bench:noisy-neighbour and the ratios between them. One round is a run beside the control
// and one beside the noisy tenth, each noisy run between two polite ones; --rounds N repeats it N times. On a
// 2-core machine shared by everything, one noisy run against one polite run measured 1.16 and 2.12 for the same
// tree: a burst of the machine's (the first second of one control run: p95 132 ms against 7 after it) lands in
// whichever run it falls in. Several rounds, each compared with the polite runs on either side of it, and their
// median leave out a round such a burst fell in, and show the spread instead of hiding it.

/** Each run's label: the table rows, and the runs the ratios compare. */
export interface RunLabels {
  /** The polite run before round 1 (0), and after round i. */
  polite(i: number): string;
  control(i: number): string;
  noisy(i: number): string;
}

export function runLabels(rounds: number): RunLabels {
  if (rounds === 1)
    return {
      polite: (i) => (i === 0 ? '9 beside a polite tenth' : '9 beside a polite tenth, again'),
      control: () => '9 beside a tenth calling as often (control)',
      noisy: () => '9 beside a noisy tenth',
    };
  return {
    polite: (i) => `9 beside a polite tenth (${i === 0 ? 'first' : `after round ${i}`})`,
    control: (i) => `9 beside a tenth calling as often (control, round ${i})`,
    noisy: (i) => `9 beside a noisy tenth (round ${i})`,
  };
}

export interface RoundRatios {
  'polite p95': number;
  'noisy / polite': number;
  'control / polite': number;
  'noisy / control': number;
}

/**
 * Per round: the noisy run's p95 and the control's over the mean of the polite runs before and after the round
 * (the stack's drift between them is not charged to the noisy tenth), and noisy over control. NaN where a
 * round had no control.
 */
export function roundRatios(
  rounds: number,
  labels: RunLabels,
  p95: (label: string) => number | undefined,
): RoundRatios[] {
  return Array.from({ length: rounds }, (_, k) => {
    const i = k + 1;
    const polite = Math.max(1, ((p95(labels.polite(i - 1)) ?? 0) + (p95(labels.polite(i)) ?? 0)) / 2);
    const noisy = p95(labels.noisy(i)) ?? NaN;
    const control = p95(labels.control(i)) ?? NaN;
    const round2 = (n: number) => Number(n.toFixed(2));
    return {
      'polite p95': round2(polite),
      'noisy / polite': round2(noisy / polite),
      'control / polite': round2(control / polite),
      'noisy / control': round2(noisy / Math.max(1, control)),
    };
  });
}

/** The median (the mean of the middle two of an even count); NaN for none. */
export function medianOf(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** What the links were answered, every round's together, by call and HTTP status. */
export function sumAnswers(links: { answers: Record<string, Record<number, number>> }[]) {
  const sum: Record<string, Record<number, number>> = {};
  for (const { answers } of links)
    for (const [what, byStatus] of Object.entries(answers))
      for (const [status, n] of Object.entries(byStatus)) {
        sum[what] ??= {};
        sum[what][Number(status)] = (sum[what][Number(status)] ?? 0) + n;
      }
  return sum;
}
