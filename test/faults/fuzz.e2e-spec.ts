// @alone: load that needs the machine to itself: the fuzzer's bounds (no 5xx, the gateway's memory) would
// count another suite's load.

import { FULL } from '../../tools/fuzz/run';
import { fuzz, FuzzReport, printReport } from '../../tools/fuzz/fuzzer';
import { FuzzStack, startFuzzStack } from '../../tools/fuzz/stack';
import { freePort } from '../../tools/harness/processes';

// The fuzzer's short profile (`npm run fuzz` runs 100,000 requests): the built gateway and worker as processes
// of their own on the test stack (a database of the run's own), a few thousand generated requests, every raw
// framing case among them. Every answer must be a documented 2xx or a 4xx problem+json, nothing 5xx, no process
// may exit, the gateway's memory stays under its bound, and every webhook answered 200 must end stored.
// A failure prints the seed: `npm run fuzz -- --seed <seed> --requests 2000` replays it.

jest.setTimeout(5 * 60_000);

const REQUESTS = 2000;

describe('fuzzer (short profile)', () => {
  let stack: FuzzStack;
  let report: FuzzReport;
  const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

  beforeAll(async () => {
    const ports = { gateway: await freePort(), gatewayMetrics: await freePort(), worker: await freePort() };
    stack = await startFuzzStack(ports, {}, () => undefined);
    report = await fuzz(stack.target, {
      ...FULL,
      requests: REQUESTS,
      seed,
      settleMs: 30_000,
      progressMs: 10_000,
      log: (line) => console.log(line),
    });
    printReport(report);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it(`sends ${REQUESTS} requests and checks every answer (seed printed on failure)`, () => {
    expect(report.requests).toBe(REQUESTS);
    // The checks ran on real answers of every kind, not on a stack that refused everything.
    expect(report.byClass['2xx']).toBeGreaterThan(REQUESTS / 10);
    expect(report.byClass['4xx']).toBeGreaterThan(REQUESTS / 10);
    expect(report.webhooks.accepted).toBeGreaterThan(REQUESTS / 20);
    expect({ seed, findings: report.findings }).toEqual({ seed, findings: {} });
  });

  it('keeps every process up, the gateway within its memory bound, and stores every accepted webhook', () => {
    expect(report.crashed).toEqual([]);
    expect(report.peakRssMb).toBeLessThanOrEqual(FULL.maxRssMb);
    expect(report.webhooks).toEqual({
      ...report.webhooks,
      stored: report.webhooks.accepted,
      deadLettered: 0,
      missing: 0,
    });
  });
});
