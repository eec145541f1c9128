/** The values of a Prometheus metric on a /metrics page, one per label set (optionally only those whose labels include `having`). */
export async function metricValues(baseUrl: string, name: string, having = ''): Promise<number[]> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))]
    .filter((x) => (x[1] ?? '').includes(having))
    .map((x) => Number(x[2]));
}

/** A counter summed over its label sets. */
export const metricSum = async (baseUrl: string, name: string, having = '') =>
  (await metricValues(baseUrl, name, having)).reduce((n, v) => n + v, 0);
