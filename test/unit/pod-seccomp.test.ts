// The e2e pod's RuntimeDefault (test/e2e/pod-seccomp.ts): a containers/common profile becomes the OCI filter for
// an architecture, a bounding set and a kernel as containers/common's setupSeccomp makes it. Each case in
// test/fixtures/seccomp/cases.json lists the rules kept, in the profile's order.
import t from 'tap';
import { ociSeccomp, type OciSeccomp, type SeccompProfile } from '../e2e/pod-seccomp.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';

interface Case {
  readonly name: string;
  readonly arch: string;
  readonly capabilities: readonly string[];
  readonly kernel: string;
  readonly architectures: readonly string[];
  readonly rules: readonly string[];
}

/** `ACTION[(errno)] name,name[index OP value]`, one line per rule. */
const rule = ({ action, errnoRet, names, args }: OciSeccomp['syscalls'][number]): string =>
  `${action.replace('SCMP_ACT_', '')}${errnoRet === undefined ? '' : `(${errnoRet})`} ${names.join(',')}` +
  args.map((a) => `[${a.index} ${a.op.replace('SCMP_CMP_', '')} ${a.value}]`).join('');

const profile = readJson<SeccompProfile>(`${FIXTURES}seccomp/profile.json`);
for (const c of readJson<Case[]>(`${FIXTURES}seccomp/cases.json`)) {
  t.test(c.name, async (t) => {
    const filter = ociSeccomp(profile, c.arch, c.capabilities, c.kernel);
    t.equal(filter.defaultAction, 'SCMP_ACT_ERRNO');
    t.equal(filter.defaultErrnoRet, 38, "the profile's default errno (ENOSYS)");
    t.same(filter.architectures, c.architectures, 'the native architecture and its sub-architectures');
    t.same(filter.syscalls.map(rule), c.rules);
  });
}

t.test('an architecture libseccomp has no name for is an error', async (t) => {
  t.throws(() => ociSeccomp(profile, 'riscv64', [], '6.1'), /no libseccomp architecture known for riscv64/);
});
