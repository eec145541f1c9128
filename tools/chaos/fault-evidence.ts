// Evidence that a fault was the fault a scenario claims, from the brokers' own logs: a node killed with SIGKILL
// writes nothing until it is started again. A line stamped inside the window means the node (or an orphan JVM on
// its ports and data) went on serving, and the ledger's "down" was wrong: the check says so instead of blaming
// the gateway for the 200s it got.
import fs from 'node:fs';
import type { KafkaNode } from './stack';

/** Kafka's log4j stamp: `[2026-11-27 00:43:30,118]`, in the JVM's (this machine's) local time. */
const STAMP = /^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})\]/;

export function logLinesBetween(file: string, from: number, to: number): string[] {
  if (!fs.existsSync(file)) return [];
  const lines: string[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = STAMP.exec(line);
    if (!m) continue;
    const at = new Date(`${m[1]}T${m[2]}.${m[3]}`).getTime(); // no zone: local time, as the JVM wrote it
    if (at > from && at < to) lines.push(line);
  }
  return lines;
}

/** Failures for each killed node that logged between `start` (both had exited) and `end` (before the restart). */
export function silentWhileDead(killed: KafkaNode[], start: number, end: number): string[] {
  return killed.flatMap((n) => {
    const lines = logLinesBetween(n.logFile, start + 200, end);
    return lines.length === 0
      ? []
      : [
          `node ${n.nodeId} was meant to be dead but logged ${lines.length} line(s) in the window: ${lines[0].slice(0, 160)}`,
        ];
  });
}
