import { useEffect, useState } from 'react';
import { client, ok, Schema } from '../api';
import { ErrorNotice } from '../Notice';

type OverviewData = Schema<'Overview'>;

const SERIES: ['accepted' | 'delivered' | 'failed', string, string][] = [
  ['accepted', 'Stored', '#2f7a44'],
  ['delivered', 'Delivered', '#1d5fa8'],
  ['failed', 'Failed', '#b3261e'],
];

/** Counts, and the last hour per minute as a chart, refreshed every 5 s while the page is open. */
export function Overview() {
  const [data, setData] = useState<OverviewData | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    const load = () =>
      ok(client.GET('/overview')).then(
        (d) => live && (setData(d), setError(null)),
        (e: Error) => live && setError(e.message),
      );
    load();
    const timer = setInterval(load, 5000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  if (error) return <ErrorNotice text={error} />;
  if (!data) return <p>Loading…</p>;
  const hour = (k: 'accepted' | 'delivered' | 'failed') => data.lastHour.reduce((n, m) => n + m[k], 0);
  return (
    <>
      <h1>Overview</h1>
      <div className="cards">
        <Card label="Stored, last hour" value={hour('accepted')} />
        <Card label="Stored (24 h)" value={data.events.stored} />
        <Card label="Accepted, not yet stored (consumer lag)" value={data.events.consumerLag} />
        <Card label="Delivered, last hour" value={hour('delivered')} />
        <Card label="Failed, last hour" value={hour('failed')} />
        <Card label="Pending deliveries (24 h)" value={data.deliveries.pending} />
        <Card label="Failed deliveries (24 h)" value={data.deliveries.failed} />
        <Card label="Dead letters waiting" value={data.deadLetters} />
      </div>
      <h2>Last hour, per minute</h2>
      <Chart data={data.lastHour} />
    </>
  );
}

/** null: not known right now (the broker did not answer). */
function Card({ label, value }: { label: string; value: number | null }) {
  return (
    <div className="card">
      <strong>{value === null ? 'unknown' : value.toLocaleString()}</strong>
      {label}
    </div>
  );
}

function Chart({ data }: { data: OverviewData['lastHour'] }) {
  const width = 720;
  const height = 200;
  const max = Math.max(1, ...data.flatMap((m) => [m.accepted, m.delivered, m.failed]));
  const x = (i: number) => (i / Math.max(1, data.length - 1)) * (width - 40) + 30;
  const y = (v: number) => height - 20 - (v / max) * (height - 40);
  const summary = SERIES.map(([k, label]) => `${label} ${data.reduce((n, m) => n + m[k], 0)}`).join(', ');
  return (
    <figure>
      <svg role="img" aria-label={`Last hour per minute: ${summary}`} viewBox={`0 0 ${width} ${height}`} width="100%">
        <line x1="30" y1={height - 20} x2={width - 10} y2={height - 20} stroke="#8aa683" />
        <text x="0" y={y(max) + 4} fontSize="11">
          {max}
        </text>
        <text x="0" y={height - 16} fontSize="11">
          0
        </text>
        {SERIES.map(([k, , colour]) => (
          <polyline
            key={k}
            fill="none"
            stroke={colour}
            strokeWidth="2"
            points={data.map((m, i) => `${x(i)},${y(m[k])}`).join(' ')}
          />
        ))}
      </svg>
      <figcaption className="legend">
        {SERIES.map(([k, label, colour]) => (
          <span key={k}>
            <span className="swatch" style={{ background: colour }} />
            {label}
          </span>
        ))}
        — oldest on the left, now on the right
      </figcaption>
    </figure>
  );
}
