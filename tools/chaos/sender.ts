// The load generator with a ledger: sends each plant of a scenario once, paced, with its own webhook-id, and
// keeps every answer. A sender does what the README tells it: on a 503 or a connection error it retries with
// the same webhook-id (after Retry-After when given), here on the other gateway, as a load balancer would.
import http from 'node:http';

export interface LedgerEntry {
  plantId: number;
  webhookId: string;
  /** eventId from the 200, when one came. */
  eventId?: string;
  firstSentAt: number;
  ackedAt?: number;
  /** When the attempt answered 200 was sent, and to which gateway (0, 1): a 200 late in a fault window is judged by it. */
  ackSentAt?: number;
  ackGateway?: number;
  attempts: number;
  unavailable: number; // 503s
  connectionErrors: number; // resets, refused connections, timeouts
  otherStatus: number[]; // anything else: a 4xx here is a bug in the suite or the service
  /** The first and the last 503's answers, when any came: what a sender was told (the cluster scenarios check). */
  first503?: Answer503;
  last503?: Answer503;
}

export interface Answer503 {
  at: number;
  /** From sending the request to the whole answer. */
  tookMs: number;
  contentType: string;
  retryAfter?: string;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
/** A sender gives up on a plant after this long; the ledger then shows it unacknowledged (a failure). */
const GIVE_UP_MS = 5 * 60_000;
const REQUEST_TIMEOUT_MS = 15_000;

function post(url: string, token: string, body: string, webhookId: string) {
  // `sentAt`: when the request got a connection, so that a wait for one of the agent's sockets is not counted
  // as the gateway's time.
  return new Promise<{ status: number; body: string; retryAfter?: string; contentType: string; sentAt: number }>(
    (resolve, reject) => {
      let sentAt = Date.now();
      const req = http.request(
        `${url}/plant/webhook`,
        {
          method: 'POST',
          agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'webhook-id': webhookId,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString(),
              retryAfter: res.headers['retry-after'] as string | undefined,
              contentType: String(res.headers['content-type'] ?? ''),
              sentAt,
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('socket', () => (sentAt = Date.now()));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    },
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sendOne(entry: LedgerEntry, gateways: string[], token: string, first: number) {
  const body = JSON.stringify({ id: entry.plantId, name: `plant-${entry.plantId}`, tag: 'chaos' });
  const deadline = Date.now() + GIVE_UP_MS;
  let backoff = 250;
  for (let g = first; Date.now() < deadline; g++) {
    entry.attempts++;
    let wait = backoff;
    try {
      const res = await post(gateways[g % gateways.length], token, body, entry.webhookId);
      if (res.status === 200) {
        entry.eventId = (JSON.parse(res.body) as { eventId: string }).eventId;
        entry.ackedAt = Date.now();
        entry.ackSentAt = res.sentAt;
        entry.ackGateway = g % gateways.length;
        return;
      }
      if (res.status !== 503) {
        entry.otherStatus.push(res.status);
        return; // a 4xx will not change by retrying: the audit reports it
      }
      entry.unavailable++;
      const at = Date.now();
      entry.last503 = {
        at,
        tookMs: at - res.sentAt,
        contentType: res.contentType,
        retryAfter: res.retryAfter,
        body: res.body,
      };
      entry.first503 ??= entry.last503;
      if (res.retryAfter) wait = Math.max(wait, Number(res.retryAfter) * 1000);
    } catch {
      entry.connectionErrors++;
    }
    await sleep(wait * (0.5 + Math.random()));
    backoff = Math.min(backoff * 2, 5000);
  }
}

/** Sends plants firstId..firstId+count-1 at `rate` per second (open loop); resolves when each is settled. */
export async function sendPlants(
  firstId: number,
  count: number,
  rate: number,
  gateways: string[],
  token: string,
  tag: string,
  onProgress: (sent: number) => void = () => undefined,
): Promise<LedgerEntry[]> {
  const ledger: LedgerEntry[] = [];
  const inflight: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    const entry: LedgerEntry = {
      plantId: firstId + i,
      webhookId: `chaos-${tag}-${firstId + i}`,
      firstSentAt: Date.now(),
      attempts: 0,
      unavailable: 0,
      connectionErrors: 0,
      otherStatus: [],
    };
    ledger.push(entry);
    inflight.push(sendOne(entry, gateways, token, i));
    onProgress(i + 1);
  }
  await Promise.all(inflight);
  return ledger;
}
