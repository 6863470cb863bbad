import { execFileSync } from 'node:child_process';

/** CLI tests run the built command (the bundle) exactly as users do; build it once so they never see stale code. */
export default function setup(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
