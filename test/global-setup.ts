import { execFileSync } from 'node:child_process';

/** CLI tests run the built command exactly as users do; build it once so they never see stale code. */
export default function setup(): void {
  execFileSync('npx', ['--no-install', 'tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
