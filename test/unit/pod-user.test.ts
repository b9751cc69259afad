// The e2e pod's identity (test/e2e/pod-user.ts, test/e2e/openshift-scc.ts): the user, groups, home and
// /etc/passwd CRI-O makes of a security context and an image; the owner and mode the kubelet gives a volume's
// files; what OpenShift's restricted-v2 assigns or rejects. Tables in test/fixtures/pod-user/.
import t from 'tap';
import { restrictedV2 } from '../e2e/openshift-scc.js';
import { processUser, volumeOwnership, type ImageUser, type UserContext } from '../e2e/pod-user.js';
import { FIXTURES, readJson } from '../helpers/fixtures.js';

interface UserCase {
  readonly name: string;
  readonly context: UserContext;
  readonly image: ImageUser;
  readonly expect?: {
    readonly uid: number;
    readonly gid: number;
    readonly groups: number[];
    readonly home: string;
    readonly addedPasswd: string;
    readonly addedGroup: string;
  };
  readonly error?: string;
}

for (const c of readJson<UserCase[]>(`${FIXTURES}pod-user/cases.json`)) {
  t.test(`user: ${c.name}`, async (t) => {
    if (c.error !== undefined) {
      t.throws(() => processUser(c.context, c.image), { message: c.error });
      return;
    }
    const user = processUser(c.context, c.image);
    const e = c.expect as NonNullable<UserCase['expect']>;
    t.same([user.uid, user.gid, user.groups, user.home], [e.uid, e.gid, e.groups, e.home], 'uid, gid, groups, HOME');
    t.equal(user.passwd, c.image.passwd + e.addedPasswd, "/etc/passwd: the image's, and the entry CRI-O adds");
    t.equal(user.group, c.image.group + e.addedGroup, "/etc/group: the image's, and the entry CRI-O adds");
  });
}

interface VolumeCase {
  readonly name: string;
  readonly entry: 'folder' | 'file' | 'token';
  readonly fsUser?: number;
  readonly fsGroup?: number;
  readonly expect: { readonly uid: number; readonly gid: number; readonly mode: string };
}

for (const c of readJson<VolumeCase[]>(`${FIXTURES}pod-user/volumes.json`)) {
  t.test(`volume: ${c.name}`, async (t) => {
    const { uid, gid, mode } = volumeOwnership(c.entry, c.fsUser, c.fsGroup);
    t.same([uid, gid, mode.toString(8)], [c.expect.uid, c.expect.gid, c.expect.mode]);
  });
}

interface SccCase {
  readonly name: string;
  readonly annotations: Record<string, string>;
  readonly pod: UserContext;
  readonly expect?: UserContext;
  readonly error?: string;
}

for (const c of readJson<SccCase[]>(`${FIXTURES}pod-user/scc.json`)) {
  t.test(`restricted-v2: ${c.name}`, async (t) => {
    if (c.error !== undefined)
      t.throws(() => restrictedV2(c.annotations, c.pod), new RegExp(c.error.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    else t.same(restrictedV2(c.annotations, c.pod), c.expect);
  });
}
