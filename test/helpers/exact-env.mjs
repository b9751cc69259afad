// A server started from a tap test runs with the environment the test gives it and nothing else. tap's process-info
// wrapper (@tapjs/processinfo) puts its own `--import` in NODE_OPTIONS of the test process and of every process the
// test spawns, whatever environment the spawn is given; a server started that way ran tap's module hooks (3 MB more
// RSS at start) and NODE_OPTIONS that no Deployment sets.

/**
 * The command that runs `command args` with exactly `env` (undefined values left out): `env -i`, which tap's
 * wrapper does not reach, since it is not Node. It execs in place, so the pid spawned is the command's.
 */
export function withExactEnv(command, args, env) {
  const vars = Object.entries(env).flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}`]));
  return ['env', ['-i', ...vars, command, ...args]];
}

/** What a server needs of this process's environment: the PATH and HOME, nothing of the test runner's. */
export function baseEnv() {
  return { PATH: process.env.PATH, HOME: process.env.HOME };
}
