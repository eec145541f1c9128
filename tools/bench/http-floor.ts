// The floor of bench:delivery, forked by it: an HTTP client alone (FLOOR_TRANSPORT: undici, the transport the
// worker delivers with, or node-http, ./node-http-transport.ts) sending a delivery's body and headers to the
// bench's receiver, with nothing else running in this process. Reports the CPU this process spent per request
// (µs), after a warm-up. With --kinds, FLOOR_TRANSPORT may also be a broker kind: the same loop publishes to
// FLOOR_URL through the worker's own connection code for that kind (./destination-targets.ts).
import { BROKER_KINDS, BrokerKind, undiciTransport } from '@app/delivery';
import { nodeHttpTransport } from './node-http-transport';

interface Transport {
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<unknown>;
  close(): Promise<unknown>;
}

async function transportOf(name: string | undefined, url: string): Promise<Transport> {
  if (BROKER_KINDS.includes(name as BrokerKind)) return (await import('./destination-targets')).brokerTransport(url);
  return name === 'node-http' ? nodeHttpTransport() : undiciTransport(true);
}

async function main() {
  const url = process.env.FLOOR_URL!;
  const count = Number(process.env.FLOOR_COUNT ?? 20000);
  const concurrency = Number(process.env.FLOOR_CONCURRENCY ?? 64);
  const body = process.env.FLOOR_BODY!;
  const headers = JSON.parse(process.env.FLOOR_HEADERS!) as Record<string, string>;
  const transport = await transportOf(process.env.FLOOR_TRANSPORT, url);
  const batch = () => Promise.all(Array.from({ length: concurrency }, () => transport.post(url, headers, body, 15000)));
  for (let i = 0; i < 2000; i += concurrency) await batch();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let sent = 0;
  for (; sent < count; sent += concurrency) await batch();
  const used = process.cpuUsage(cpu);
  await transport.close();
  process.send!({
    usPerRequest: (used.user + used.system) / sent,
    perSecond: Math.round(sent / ((performance.now() - started) / 1000)),
  });
}

void main();
