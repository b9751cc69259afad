// Runs the calling script again inside a network namespace of its own, where only loopback exists: a server
// that listens on every interface (the upstream webhook, ours with the Deployment's 0.0.0.0) is then reachable
// from nothing but this machine's loopback. Returns only inside the namespace; outside, it exits with the inner
// run's status. `onRefused` is called (and the process exits 1) when `unshare -n` is not allowed here.
import { spawnSync } from 'node:child_process';

const INSIDE = 'SW_BENCH_NETNS';

export function reexecInNetns(onRefused) {
  if (process.env[INSIDE] === '1') return;
  if (spawnSync('unshare', ['-n', 'true']).status !== 0) {
    onRefused('cannot make a private network namespace (`unshare -n`): a server would listen on every interface');
    process.exit(1);
  }
  const inner = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, [INSIDE]: '1' } },
  );
  process.exit(inner.status ?? 1);
}
