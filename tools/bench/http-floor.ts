// The floor of bench:delivery, forked by it: an HTTP client alone (FLOOR_TRANSPORT: undici, the transport the
// worker delivers with, or node-http, ./node-http-transport.ts) sending a delivery's body and headers to the
// bench's receiver, with nothing else running in this process. Reports the CPU this process spent per request
// (µs), after a warm-up.
import { undiciTransport } from '@app/delivery';
import { nodeHttpTransport } from './node-http-transport';

async function main() {
  const url = process.env.FLOOR_URL!;
  const count = Number(process.env.FLOOR_COUNT ?? 20000);
  const concurrency = Number(process.env.FLOOR_CONCURRENCY ?? 64);
  const body = process.env.FLOOR_BODY!;
  const headers = JSON.parse(process.env.FLOOR_HEADERS!) as Record<string, string>;
  const transport = process.env.FLOOR_TRANSPORT === 'node-http' ? nodeHttpTransport() : undiciTransport(true);
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
