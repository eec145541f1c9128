import { FREE_PORTS } from '../../tools/harness/processes';
import { SECURE_PORTS } from '../../tools/harness/secure-kafka';
import { clusterNodes } from '../../tools/local-stack/kafka';
import { PROFILES } from '../../tools/local-stack/index';

// Suites run three at a time, the fault suite among them on its fixed ports, while other suites start servers on
// ports freePort() draws. A drawn port that a profile fixes is taken by whichever binds first: the fault suite's
// second broker once found a suite's Redis on 31094. So the ranges must not meet, whatever is added later.
const inRange = (port: number, r: { from: number; count: number }) => port >= r.from && port < r.from + r.count;

describe('the ports the test harness hands out', () => {
  it('never include a port a profile fixes, on one node or three', () => {
    const fixed = Object.entries(PROFILES).flatMap(([name, p]) => [
      ...clusterNodes({ port: p.kafkaPort, controllerPort: p.controllerPort, nodes: 3 }).flatMap((n) => [
        { name, port: n.port },
        { name, port: n.controllerPort },
      ]),
      { name, port: p.pgPort },
    ]);
    expect(fixed.length).toBeGreaterThan(20); // every profile was read
    expect(fixed.filter((f) => inRange(f.port, FREE_PORTS) || inRange(f.port, SECURE_PORTS))).toEqual([]);
  });

  it("keep the fault suite's ports, which it kills and restarts, below Linux's ephemeral ports", () => {
    // An outgoing connection of any suite beside it may hold an ephemeral port as its own, for minutes.
    const { kafkaPort, controllerPort, pgPort } = PROFILES.chaos;
    const nodes = clusterNodes({ port: kafkaPort, controllerPort, nodes: 3 });
    const ports = [...nodes.flatMap((n) => [n.port, n.controllerPort]), pgPort];
    expect(ports.filter((p) => p >= 32768)).toEqual([]);
  });

  it("never meet the secure brokers' range, and stay below Linux's ephemeral ports", () => {
    const ends = (r: { from: number; count: number }) => [r.from, r.from + r.count - 1];
    expect(ends(SECURE_PORTS).some((p) => inRange(p, FREE_PORTS))).toBe(false);
    expect(ends(FREE_PORTS).some((p) => inRange(p, SECURE_PORTS))).toBe(false);
    expect(FREE_PORTS.from + FREE_PORTS.count).toBeLessThanOrEqual(32768);
    expect(SECURE_PORTS.from + SECURE_PORTS.count).toBeLessThanOrEqual(32768);
  });
});
