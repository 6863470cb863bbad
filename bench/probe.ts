import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into every measured child (`node --import dist/bench/probe.js …`): at exit it writes the
 * longest event-loop delay, the process's CPU time and its peak RSS to a file named by its pid, which
 * the benchmark reads. Module loading at start-up counts as a block too (a few tens of ms).
 */

export interface ProbeReport {
  loopMaxMs: number;
  cpuMs: number;
  peakRssKiB: number;
}

export function probeFile(pid: number): string {
  return path.join(tmpdir(), `shop-sync-bench-probe-${pid}.json`);
}

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
process.on('exit', () => {
  delay.disable();
  const cpu = process.cpuUsage();
  const report: ProbeReport = {
    loopMaxMs: Math.round(delay.max / 1e5) / 10,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakRssKiB: process.resourceUsage().maxRSS,
  };
  writeFileSync(probeFile(process.pid), JSON.stringify(report));
});
