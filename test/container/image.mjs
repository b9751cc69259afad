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
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
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
import { buildImageIndex, PLATFORMS, platformImages, sbomsBeside } from '../../dist/packaging/image.js';

reexecInNetns((reason) => {
  check(false, reason);
  summary('image');
});

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sw-podman-'));
const IMAGE = 'localhost/snapshot-webhook:image-test';
/** The index's amd64 image, by digest, once built. */
let AMD64;
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

/**
 * The Containerfile's base images, [build, runtime]: each FROM's image, an ARG's default in place of `${NAME}`, and
 * without a `--platform=` option.
 */
function bases() {
  const containerfile = readFileSync(join(root, 'Containerfile'), 'utf8');
  const args = Object.fromEntries([...containerfile.matchAll(/^ARG (\w+)=(\S+)/gm)].map((m) => [m[1], m[2]]));
  return [...containerfile.matchAll(/^FROM (?:--platform=\S+ )?(\S+)/gm)].map((m) =>
    m[1].replace(/^\$\{(\w+)\}$/, (_, name) => args[name]),
  );
}

/** Debian 12 minbase from Debian's own mirror into `folder`, for `arch` (a foreign one only unpacked, not configured). */
function debootstrap(folder, arch) {
  const foreign = arch === 'amd64' ? [] : ['--foreign', `--arch=${arch}`];
  const command = ['debootstrap', ...foreign, '--variant=minbase', '--include=ca-certificates', 'bookworm', folder];
  execFileSync(OUTSIDE[0], [...OUTSIDE.slice(1), ...command, 'http://deb.debian.org/debian'], {
    stdio: 'pipe',
    timeout: 600_000,
  });
  rmSync(join(folder, 'debootstrap'), { recursive: true, force: true });
}

/** A folder's files imported as an image for `arch`, with `changes` (Containerfile instructions). */
function importFolder(folder, name, arch, changes = []) {
  const tar = join(work, `${arch}.tar`);
  execFileSync('tar', ['-C', folder, '-cf', tar, '.'], { stdio: 'pipe' });
  podman(['import', `--arch=${arch}`, ...changes.flatMap((c) => ['--change', c]), tar, name]);
  rmSync(tar);
}

/**
 * What the distroless runtime base sets up in a Debian root: its users root, nobody and nonroot (65532) and their
 * groups (a foreign debootstrap, which configures nothing, writes none), nonroot's home, no shell.
 */
function asDistroless(folder) {
  writeFileSync(
    join(folder, 'etc/passwd'),
    'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' +
      'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n',
  );
  writeFileSync(join(folder, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\nnonroot:x:65532:\n');
  mkdirSync(join(folder, 'home/nonroot'), { recursive: true });
  chownSync(join(folder, 'home/nonroot'), 65532, 65532);
  for (const shell of ['bin/sh', 'bin/dash', 'bin/bash', 'bin/rbash']) rmSync(join(folder, 'usr', shell), { force: true });
}

/**
 * The stand-ins: Debian 12 for amd64 with the pinned Node and npm 11 as the build base; the runtime base as a
 * manifest list of Debian 12 for amd64 and for arm64 (unpacked by debootstrap without running anything of arm64),
 * each as distroless lays it out.
 */
function standIns() {
  const [build, run] = bases();
  const debian = join(work, 'debian');
  debootstrap(debian, 'amd64');
  importFolder(debian, 'localhost/stand-in-debian12', 'amd64');
  asDistroless(debian);
  const distroless = ['USER 65532', 'WORKDIR /home/nonroot'];
  importFolder(debian, `${run}-amd64`, 'amd64', distroless);
  rmSync(debian, { recursive: true, force: true });
  const arm64 = join(work, 'debian-arm64');
  debootstrap(arm64, 'arm64');
  asDistroless(arm64);
  importFolder(arm64, `${run}-arm64`, 'arm64', distroless);
  rmSync(arm64, { recursive: true, force: true });
  podman(['manifest', 'create', run]);
  for (const arch of ['amd64', 'arm64']) podman(['manifest', 'add', run, `containers-storage:${run}-${arch}`]);

  const context = join(work, 'stand-in');
  mkdirSync(context);
  cpSync(realpathSync(process.execPath), join(context, 'node'));
  // npm 11, the major Node 24 bundles, from the npm registry (its package holds its own dependencies).
  const pack = [...OUTSIDE.slice(1), 'npm', 'pack', 'npm@11', '--silent', `--pack-destination=${context}`];
  const tarball = execFileSync(OUTSIDE[0], pack, { encoding: 'utf8' }).trim();
  execFileSync('tar', ['-xzf', join(context, tarball), '-C', context]);
  renameSync(join(context, 'package'), join(context, 'npm'));
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
  podman(['build', '--pull=never', '-t', build, '-f', join(context, 'build.Containerfile'), context]);
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
  const run = ['run', '--rm', '--network=none', ...LIMITS, '--entrypoint', '/nodejs/bin/node', AMD64, '-e', script];
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

/** ELF's e_machine of a file: 0xb7 for aarch64, 0x3e for x86-64. */
const elfMachine = (file) => readFileSync(file).readUInt16LE(18);

/**
 * The arm64 image's files (`podman export` of a container created from it, never started), and its Node running its
 * bundle under `qemu` as the amd64 container ran: the Deployment's arguments, environment and port, the same
 * certificates; a second default class is denied over HTTPS, and SIGTERM ends it with exit 0.
 */
async function arm64UnderQemu(qemu, image, { certs, ca, args, port, mountPath, pinned }) {
  const rootfs = join(work, 'arm64-rootfs');
  mkdirSync(rootfs);
  const container = podman(['create', '--platform=linux/arm64', image]).trim();
  podman(['export', `--output=${join(work, 'arm64.tar')}`, container]);
  podman(['rm', container]);
  execFileSync('tar', ['-xf', join(work, 'arm64.tar'), '-C', rootfs]);
  rmSync(join(work, 'arm64.tar'));
  const node = join(rootfs, 'nodejs/bin/node');
  check(elfMachine(node) === 0xb7, `the arm64 image's /nodejs/bin/node is an aarch64 program (e_machine ${elfMachine(node)})`);
  const [version, arch] = execFileSync(
    qemu,
    ['-L', rootfs, node, '-e', 'console.log(process.versions.node); console.log(process.arch)'],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  )
    .trim()
    .split('\n');
  check(version === pinned && arch === 'arm64', `under QEMU it is the pinned Node for arm64 (${version} ${arch})`);
  const hostArgs = args.map((a) => a.replace(mountPath, certs));
  const server = spawn(
    qemu,
    ['-L', rootfs, node, 'dist/bundle/main.js', ...hostArgs, `--classes-from=${join(root, 'test/fixtures/classes')}`],
    {
      cwd: join(rootfs, 'app'),
      env: { PATH: process.env.PATH, ...deploymentEnv() },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  server.stdout.on('data', (c) => (log += c));
  server.stderr.on('data', (c) => (log += c));
  const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
  try {
    const ready = await waitReady(port, ca, performance.now(), 120_000).then(
      () => true,
      () => false,
    );
    check(ready, `under QEMU it starts and /readyz answers 200 over HTTPS on port ${port}${ready ? '' : `: ${log.slice(-500)}`}`);
    const denied = await deniesSecondDefault(port, ca);
    check(denied.ok, `under QEMU a second default class is denied: "${denied.message}"`);
    server.kill('SIGTERM');
    const { code, signal } = await Promise.race([
      exited,
      new Promise((r) => setTimeout(() => r({ code: 'still running' }), gracePeriodMs() * 4)),
    ]);
    check(code === 0, `under QEMU SIGTERM ends it with exit 0 (${code ?? signal})`);
  } finally {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGKILL');
      await exited;
    }
  }
}

/** Posts the fixture of a second default class; whether it is denied with the fixture's message, and the message. */
async function deniesSecondDefault(port, ca) {
  const fixture = JSON.parse(
    readFileSync(join(root, 'test/fixtures/admission/volumesnapshotclasses/v1/create-second-default.json'), 'utf8'),
  );
  const answer = await post(port, ca, '/validate', JSON.stringify(fixture.review));
  const response = JSON.parse(answer.body).response ?? {};
  return {
    ok: answer.status === 200 && response.allowed === false && response.status?.message === fixture.expect.message,
    message: response.status?.message,
  };
}

try {
  standIns();
  check(true, `stand-ins for ${bases().join(' and ')} built on Debian 12`);
  // No step runs on the target's architecture: the build stage runs on the builder's platform, the last only copies.
  const containerfile = readFileSync(join(root, 'Containerfile'), 'utf8');
  const runtimeStage = containerfile.slice(containerfile.lastIndexOf('\nFROM '));
  check(
    /^FROM --platform=\$BUILDPLATFORM /m.test(containerfile) && !/^RUN /m.test(runtimeStage),
    "the build stage runs on the builder's platform and the runtime stage has no RUN: no emulation builds arm64",
  );

  // This machine reaches the npm registry through a proxy whose certificate authority is in its own bundle, not in
  // Debian's: the build stage's RUN steps see the machine's bundle and an npmrc naming it, mounted for the build
  // only (a mount is in no layer of the image). The index is built as `npm run image` builds it.
  const npmrc = join(work, 'npmrc');
  writeFileSync(npmrc, `cafile=${HOST_CA_BUNDLE}\n`);
  const outside = (args) => podman(args, { outside: true });
  buildImageIndex(outside, IMAGE, root, [
    '--pull=never',
    '--network=host',
    `--volume=${HOST_CA_BUNDLE}:${HOST_CA_BUNDLE}:ro`,
    `--volume=${npmrc}:/usr/local/etc/npmrc:ro`,
  ]);
  const images = platformImages(podman, IMAGE);
  check(
    JSON.stringify(images.map((i) => i.platform).sort()) === JSON.stringify([...PLATFORMS].sort()),
    `the Containerfile builds one index for ${images.map((i) => i.platform).join(' and ')}, no step run on arm64`,
  );
  const ref = (platform) => `${IMAGE}@${images.find((i) => i.platform === platform)?.digest}`;
  AMD64 = ref('linux/amd64');

  const [config] = JSON.parse(podman(['image', 'inspect', AMD64]));
  check(config.Config.User === '65532:65532', `USER 65532:65532 (${config.Config.User})`);
  check(config.Config.WorkingDir === '/app', `WORKDIR /app (${config.Config.WorkingDir})`);
  check(
    JSON.stringify(config.Config.Entrypoint) === '["/nodejs/bin/node","dist/bundle/main.js"]',
    `ENTRYPOINT the bundle on the image's Node (${JSON.stringify(config.Config.Entrypoint)})`,
  );
  const [arm64Config] = JSON.parse(podman(['image', 'inspect', ref('linux/arm64')]));
  check(
    arm64Config.Architecture === 'arm64' &&
      JSON.stringify(arm64Config.Config.Entrypoint) === JSON.stringify(config.Config.Entrypoint),
    `the arm64 image is arm64 with the same entrypoint (${arm64Config.Architecture})`,
  );
  const [version, arch] = inImage('console.log(process.versions.node); console.log(process.arch)');
  const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies.node;
  check(
    version === pinned && arch === 'x64',
    `the amd64 image runs the pinned Node from the npm registry (${version} ${arch}, pinned ${pinned})`,
  );
  const files = inImage(WALK, '/app');
  const bundle = readdirSync(join(root, 'dist/bundle'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join('/app/dist/bundle', e.parentPath.slice(join(root, 'dist/bundle').length), e.name))
    .sort();
  check(
    JSON.stringify([...files].sort()) === JSON.stringify(['/app/package.json', '/app/sbom.cdx.json', ...bundle].sort()),
    `/app holds package.json, the SBOM and the bundle this checkout builds, no node_modules (${files.length} files)`,
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
    AMD64,
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
  const denied = await deniesSecondDefault(port, ca);
  check(denied.ok, `a second default class is denied: "${denied.message}"`);

  podman(['stop', `--time=${Math.ceil(gracePeriodMs() / 1000)}`, CONTAINER]);
  const [stopped] = JSON.parse(podman(['container', 'inspect', CONTAINER]));
  check(stopped.State.ExitCode === 0 && !stopped.State.OOMKilled, `SIGTERM: exit ${stopped.State.ExitCode}, not OOM-killed`);
  const lines = podman(['logs', CONTAINER])
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const problems = lines.filter((l) => l.level >= 40).map((l) => l.msg);
  check(problems.length === 0, `nothing in its log is a warning or an error (${problems.join('; ')})`);

  // The SBOMs beside the index, as `npm run image` writes them: what each platform's image holds.
  const sboms = sbomsBeside(podman, IMAGE, join(work, 'sbom'));
  const bundled = JSON.parse(readFileSync(join(root, 'dist/bundle-packages.json'), 'utf8'));
  const { runtimeNode } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  for (const platform of PLATFORMS) {
    const file = sboms.find((f) => f.endsWith(`sbom-${platform.replace('/', '-')}.cdx.json`));
    const bom = JSON.parse(readFileSync(file, 'utf8'));
    const listed = new Set(bom.components.map((c) => `${c.name}@${c.version}`));
    const node = bom.components.find((c) => c.name === runtimeNode[platform].package);
    const integrity = node && `sha512-${Buffer.from(node.hashes[0].content, 'hex').toString('base64')}`;
    check(
      bom.bomFormat === 'CycloneDX' &&
        bom.metadata.component.properties.some((p) => p.name === 'snapshot-webhook:platform' && p.value === platform),
      `${platform}: the SBOM beside the index is CycloneDX ${bom.specVersion} of that platform's image`,
    );
    const buildTools = ['typescript', 'tap', 'esbuild', 'eslint', 'tsx'].filter((n) =>
      listed.has(`${n}@${bom.components.find((c) => c.name === n)?.version}`),
    );
    check(
      bundled.every((p) => listed.has(`${p.name}@${p.version}`)) && buildTools.length === 0,
      `${platform}: it lists the ${bundled.length} npm packages the bundle holds code of and no build tool (${buildTools.join(', ')})`,
    );
    check(
      node?.version === pinned && integrity === runtimeNode[platform].integrity,
      `${platform}: it lists the image's Node, ${node?.name}@${node?.version}, with the integrity package.json pins`,
    );
  }

  // The arm64 image's own Node and bundle, run by QEMU's user-mode emulation on this x86_64 machine.
  const qemu = spawnSync('sh', ['-c', 'command -v qemu-aarch64-static'], { encoding: 'utf8' }).stdout.trim();
  if (qemu === '') {
    console.log("# SKIP the arm64 image under QEMU: qemu-aarch64-static not found (Debian's qemu-user-static)");
  } else {
    await arm64UnderQemu(qemu, ref('linux/arm64'), { certs, ca, args, port, mountPath: mount.mountPath, pinned });
  }
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
