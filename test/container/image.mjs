// The image, built from the Containerfile and run by a container engine: Debian's podman builds it (the build
// context .dockerignore lets through, `npm ci` and `npm run build` in the build stage, the last stage's COPY, USER
// and ENTRYPOINT) and runs it as manifests/base/deployment.yaml does (its user and group, a read-only root, every
// capability dropped, no privilege escalation, the runtime's default seccomp profile, the memory limit, the
// environment, arguments and port, the certificates as a read-only volume). It serves the fixture classes
// (`--classes-from`) instead of a cluster's: as-a-pod.e2e runs the cluster mode against real apiservers.
//
// The script runs in a network namespace of its own where only loopback exists (test/helpers/netns.mjs), so the
// server listens on every interface as the Deployment says and is reachable from nothing else. Only what needs the
// network (debootstrap from Debian's mirror, npm 11 and the build stage's `npm ci` from the npm registry) runs in
// the namespace the script was started in.
//
// No registry for the two base images is reachable here, so both are stand-ins built first and tagged with the
// Containerfile's names: Debian 12 (debootstrap, minbase, with ca-certificates), plus
// - for `node:24-bookworm-slim`: the pinned Node at /usr/local/bin and npm 11 (the major Node 24 bundles) from
//   the npm registry, as that image lays them out;
// - for `distroless/nodejs24-debian12:nonroot`: the pinned Node at /nodejs/bin/node, the user nonroot (65532),
//   its home as WORKDIR, no shell, USER 65532 and Node as ENTRYPOINT, as distroless sets them.
// What this cannot show: anything of the real bases beyond those (their libraries' versions, distroless's smaller
// file set). podman keeps its images, containers and state under one temporary folder (overlay storage), removed
// at the end.
// Prints `image: N passed, N failed`.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitReady } from '../bench/servers.mjs';
import { check, summary } from '../helpers/checks.mjs';
import {
  deploymentArgs,
  deploymentEnv,
  deploymentSecretMounts,
  deploymentSecurity,
  gracePeriodMs,
  memoryLimitMb,
} from '../helpers/deployment.mjs';
import { reexecInNetns } from '../helpers/netns.mjs';

reexecInNetns((reason) => {
  check(false, reason);
  summary('image');
});

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sw-podman-'));
const IMAGE = 'localhost/snapshot-webhook:image-test';
const CONTAINER = 'snapshot-webhook-image-test';
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** The network namespace the script was started in: its parent's, outside the one reexecInNetns made. */
const OUTSIDE = ['nsenter', `--net=/proc/${process.ppid}/ns/net`];
/**
 * Resource limits the container may have here. podman's defaults (open files and processes 1,048,576) are above
 * what this machine lets even root set (it drops CAP_SYS_RESOURCE): open files at this machine's own hard limit,
 * processes at 4,096 (a Node server runs about a dozen threads).
 */
const LIMITS = [
  `--ulimit=nofile=${execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim()}`,
  '--ulimit=nproc=4096',
];

/**
 * podman with its storage and state in `work` (only its blob cache is in /var/lib/containers); `outside`: in the
 * namespace the script was started in, for a build that needs the network.
 */
function podman(args, { outside = false } = {}) {
  const global = [
    `--root=${work}/storage`,
    `--runroot=${work}/run`,
    `--tmpdir=${work}/libpod`,
    '--storage-driver=overlay',
    '--cgroup-manager=cgroupfs',
    '--events-backend=none',
    // runc: crun 1.8 refuses this machine's hybrid cgroups (v1 controllers, and v2 mounted beside them).
    '--runtime=runc',
  ];
  const command = [...(outside ? OUTSIDE : []), 'podman', ...global, ...args];
  const r = spawnSync(command[0], command.slice(1), { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (r.status !== 0) throw new Error(`podman ${args.join(' ')}: ${r.status}\n${(r.stderr ?? '').slice(-3000)}`);
  return r.stdout;
}

/** The Containerfile's FROM images. */
function bases() {
  const containerfile = readFileSync(join(root, 'Containerfile'), 'utf8');
  return [...containerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
}

/** Debian 12 from Debian's own mirror, imported as an image; then the two stand-ins built on it. */
function standIns() {
  const debian = join(work, 'debian');
  execFileSync(
    OUTSIDE[0],
    [
      ...OUTSIDE.slice(1),
      'debootstrap',
      '--variant=minbase',
      '--include=ca-certificates',
      'bookworm',
      debian,
      'http://deb.debian.org/debian',
    ],
    { stdio: 'pipe', timeout: 600_000 },
  );
  const tar = join(work, 'debian.tar');
  execFileSync('tar', ['-C', debian, '-cf', tar, '.'], { stdio: 'pipe' });
  rmSync(debian, { recursive: true, force: true });
  podman(['import', tar, 'localhost/stand-in-debian12']);
  rmSync(tar);
  const context = join(work, 'stand-in');
  mkdirSync(context);
  cpSync(realpathSync(process.execPath), join(context, 'node'));
  // npm 11, the major Node 24 bundles, from the npm registry (its package holds its own dependencies).
  const pack = [...OUTSIDE.slice(1), 'npm', 'pack', 'npm@11', '--silent', `--pack-destination=${context}`];
  const tarball = execFileSync(OUTSIDE[0], pack, { encoding: 'utf8' }).trim();
  execFileSync('tar', ['-xzf', join(context, tarball), '-C', context]);
  renameSync(join(context, 'package'), join(context, 'npm'));
  const [build, run] = bases();
  writeFileSync(
    join(context, 'build.Containerfile'),
    [
      'FROM localhost/stand-in-debian12',
      'COPY node /usr/local/bin/node',
      'COPY npm /usr/local/lib/node_modules/npm',
      'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm' +
        ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
      'CMD ["node"]',
    ].join('\n'),
  );
  writeFileSync(
    join(context, 'run.Containerfile'),
    [
      'FROM localhost/stand-in-debian12',
      'COPY node /nodejs/bin/node',
      "RUN echo 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >> /etc/passwd" +
        " && echo 'nonroot:x:65532:' >> /etc/group && mkdir -p /home/nonroot && chown 65532:65532 /home/nonroot" +
        ' && rm -f /usr/bin/sh /usr/bin/dash /usr/bin/bash /usr/bin/rbash',
      'USER 65532',
      'WORKDIR /home/nonroot',
      'ENTRYPOINT ["/nodejs/bin/node"]',
    ].join('\n'),
  );
  podman(['build', '--pull=never', '-t', build, '-f', join(context, 'build.Containerfile'), context]);
  podman(['build', '--pull=never', '-t', run, '-f', join(context, 'run.Containerfile'), context]);
}

/** POSTs `body` over HTTPS to the server on loopback; resolves with the status and the answer's text. */
function post(port, ca, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        ca,
        servername: 'localhost',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        timeout: 2000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.end(body);
  });
}

/** What a script run by the image's own Node prints (the image has no shell), its lines. */
function inImage(script, ...args) {
  const run = ['run', '--rm', '--network=none', ...LIMITS, '--entrypoint', '/nodejs/bin/node', IMAGE, '-e', script];
  return podman([...run, ...args])
    .trim()
    .split('\n');
}

/** Every file under a folder, as `inImage` lists it. */
const WALK =
  "const {readdirSync}=require('node:fs');const walk=(d)=>readdirSync(d,{withFileTypes:true})" +
  ".flatMap((e)=>e.isDirectory()?walk(d+'/'+e.name):[d+'/'+e.name]);console.log(walk(process.argv[1]).join('\\n'))";

const status = (pid) =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .map((l) => l.split(':\t')),
  );

/** The memory limit of the cgroup a process is in (cgroup v1's memory hierarchy, or v2's). */
function memoryLimitBytes(pid) {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
  const v1 = lines.map((l) => l.split(':')).find(([, controllers]) => controllers.split(',').includes('memory'));
  const file = v1
    ? `/sys/fs/cgroup/memory${v1[2]}/memory.limit_in_bytes`
    : `/sys/fs/cgroup${lines.find((l) => l.startsWith('0::'))?.slice(3)}/memory.max`;
  return Number(readFileSync(file, 'utf8').trim());
}

try {
  standIns();
  check(true, `stand-ins for ${bases().join(' and ')} built on Debian 12`);

  // This machine reaches the npm registry through a proxy whose certificate authority is in its own bundle, not in
  // Debian's: the build stage's RUN steps see the machine's bundle and an npmrc naming it, mounted for the build
  // only (a mount is in no layer of the image).
  const npmrc = join(work, 'npmrc');
  writeFileSync(npmrc, `cafile=${HOST_CA_BUNDLE}\n`);
  podman(
    [
      'build',
      '--pull=never',
      '--network=host',
      `--volume=${HOST_CA_BUNDLE}:${HOST_CA_BUNDLE}:ro`,
      `--volume=${npmrc}:/usr/local/etc/npmrc:ro`,
      '-t',
      IMAGE,
      '-f',
      join(root, 'Containerfile'),
      root,
    ],
    { outside: true },
  );
  check(true, 'the Containerfile builds: npm ci and npm run build in the build stage, the last stage from it');

  const [config] = JSON.parse(podman(['image', 'inspect', IMAGE]));
  check(config.Config.User === '65532:65532', `USER 65532:65532 (${config.Config.User})`);
  check(config.Config.WorkingDir === '/app', `WORKDIR /app (${config.Config.WorkingDir})`);
  check(
    JSON.stringify(config.Config.Entrypoint) === '["/nodejs/bin/node","dist/bundle/main.js"]',
    `ENTRYPOINT the bundle on the base's Node (${JSON.stringify(config.Config.Entrypoint)})`,
  );
  const [version] = inImage('console.log(process.versions.node)');
  // The pin itself, not this script's Node: the stand-ins copy the Node that runs this script (npm scripts run the pin).
  const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies.node;
  check(version === pinned, `the image runs the pinned Node (${version}, pinned ${pinned})`);
  const files = inImage(WALK, '/app');
  const bundle = readdirSync(join(root, 'dist/bundle'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join('/app/dist/bundle', e.parentPath.slice(join(root, 'dist/bundle').length), e.name))
    .sort();
  check(
    JSON.stringify([...files].sort()) === JSON.stringify(['/app/package.json', ...bundle].sort()),
    `/app holds package.json and the bundle this checkout builds, no node_modules (${files.length} files)`,
  );

  // Run it as the Deployment does.
  const security = deploymentSecurity();
  // The manifest's own arguments and port: in this namespace nothing else listens.
  const args = deploymentArgs(undefined);
  const port = Number(args.find((a) => a.startsWith('--port='))?.slice('--port='.length));
  const certs = join(work, 'certs');
  execFileSync(process.execPath, [join(root, 'dist/certs/ensure-dev-certs.js'), certs], { stdio: 'pipe' });
  // As the kubelet writes a secret volume: every file 0644 (the manifest sets no defaultMode).
  for (const name of readdirSync(certs)) chmodSync(join(certs, name), 0o644);
  const ca = readFileSync(join(certs, 'ca.crt'));
  const [mount] = deploymentSecretMounts();
  const run = [
    'run',
    '--detach',
    `--name=${CONTAINER}`,
    '--network=host',
    ...LIMITS,
    `--user=${security.runAsUser}:${security.runAsGroup}`,
    ...(security.readOnlyRoot ? ['--read-only'] : []),
    ...(security.dropAllCapabilities ? ['--cap-drop=ALL'] : []),
    ...(security.noNewPrivileges ? ['--security-opt=no-new-privileges'] : []),
    `--memory=${memoryLimitMb()}m`,
    ...Object.entries(deploymentEnv()).map(([name, value]) => `--env=${name}=${value}`),
    `--volume=${certs}:${mount.mountPath}:ro`,
    `--volume=${join(root, 'test/fixtures/classes')}:/classes:ro`,
    IMAGE,
    ...args,
    '--classes-from=/classes',
  ];
  podman(run);
  const ready = await waitReady(port, ca, performance.now()).then(
    () => true,
    () => false,
  );
  check(ready, `it starts and /readyz answers 200 over HTTPS on the Deployment's port ${port}`);

  const [state] = JSON.parse(podman(['container', 'inspect', CONTAINER]));
  const s = status(state.State.Pid);
  check(s.Uid === '65532\t65532\t65532\t65532' && s.Gid === '65532\t65532\t65532\t65532', `uid and gid 65532 (${s.Uid})`);
  check(s.CapEff === '0000000000000000' && s.CapBnd === '0000000000000000', 'no capabilities');
  check(s.NoNewPrivs === '1', 'no privilege escalation');
  check(s.Seccomp === '2', "the runtime's default seccomp profile is on");
  const limit = memoryLimitBytes(state.State.Pid);
  check(limit === memoryLimitMb() * 2 ** 20, `its memory cgroup has the Deployment's limit (${limit} bytes)`);
  const fixture = JSON.parse(
    readFileSync(join(root, 'test/fixtures/admission/volumesnapshotclasses/v1/create-second-default.json'), 'utf8'),
  );
  const answer = await post(port, ca, '/validate', JSON.stringify(fixture.review));
  const response = JSON.parse(answer.body).response ?? {};
  check(
    answer.status === 200 && response.allowed === false && response.status?.message === fixture.expect.message,
    `a second default class is denied: "${response.status?.message}"`,
  );

  podman(['stop', `--time=${Math.ceil(gracePeriodMs() / 1000)}`, CONTAINER]);
  const [stopped] = JSON.parse(podman(['container', 'inspect', CONTAINER]));
  check(stopped.State.ExitCode === 0 && !stopped.State.OOMKilled, `SIGTERM: exit ${stopped.State.ExitCode}, not OOM-killed`);
  const lines = podman(['logs', CONTAINER])
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const problems = lines.filter((l) => l.level >= 40).map((l) => l.msg);
  check(problems.length === 0, `nothing in its log is a warning or an error (${problems.join('; ')})`);
} catch (error) {
  check(false, `image: ${error.message}`);
} finally {
  try {
    podman(['rm', '--force', '--time=0', CONTAINER]);
  } catch {
    // never started
  }
  rmSync(work, { recursive: true, force: true });
}
process.exit(summary('image'));
