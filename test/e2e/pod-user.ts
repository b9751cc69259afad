// Who a container's process is, and who owns the files of its volumes, as the kubelet, CRI-O (MicroShift's and
// OpenShift's runtime) and runc make them from the pod's security context and the image:
// - CRI-O's `setupContainerUser`: the user is runAsUser, else the image's USER, looked up in the image's
//   /etc/passwd and /etc/group the way moby/sys/user's `GetExecUser` does (a uid in no entry gets gid 0); a uid in
//   no entry gets one appended to a copy of /etc/passwd (`GeneratePasswd`, home: HOME if set, else the working
//   folder), and a gid in no entry one in /etc/group (`GenerateGroup`); the process's groups are its gid, the
//   groups that list the user by name, and the security context's supplemental groups (the Merge policy);
// - the kubelet hands on the pod's supplementalGroups and fsGroup as supplemental groups;
// - runc sets HOME, when the environment has none, from the user's entry in the container's /etc/passwd;
// - the kubelet writes secret and projected volumes' files as root, 0644 (no defaultMode in the manifest); the
//   projected service account token is 0600 when every container has the same runAsUser (`FsUserFrom`) or the
//   pod has an fsGroup, and then belongs to that user if there is one; with an fsGroup, `SetVolumeOwnership` gives
//   every file that group and group read (read-only volumes), and folders group read and search and set-group-ID.
// The image's /etc/passwd and /etc/group are taken to be root's, 0644, as distroless ships them: CRI-O leaves a
// file the user could write alone.

/** The security context as the kubelet hands it to the runtime: the container's fields over the pod's. */
export interface UserContext {
  readonly runAsUser?: number | undefined;
  readonly runAsGroup?: number | undefined;
  readonly fsGroup?: number | undefined;
  readonly supplementalGroups?: readonly number[] | undefined;
}

export interface ImageUser {
  /** The image's USER: `name` or `uid`, optionally `:group` or `:gid`. */
  readonly user: string;
  readonly passwd: string;
  readonly group: string;
  readonly workingDir: string;
  /** HOME from the image's ENV or the manifest, if either sets it. */
  readonly home?: string | undefined;
}

export interface ProcessUser {
  readonly uid: number;
  readonly gid: number;
  /** The supplementary groups, in the kernel's order (sorted); /proc/PID/status lists them so. */
  readonly groups: readonly number[];
  readonly home: string;
  /** /etc/passwd and /etc/group as the container sees them. */
  readonly passwd: string;
  readonly group: string;
}

interface Entry {
  readonly name: string;
  readonly id: number;
  /** passwd: the gid; group: unused. */
  readonly gid: number;
  /** passwd: the home folder; group: unused. */
  readonly home: string;
  /** group: the member user names. */
  readonly members: readonly string[];
}

function entries(file: string, kind: 'passwd' | 'group'): Entry[] {
  return file
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const f = line.split(':');
      return kind === 'passwd'
        ? { name: f[0] ?? '', id: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '', members: [] }
        : { name: f[0] ?? '', id: Number(f[2]), gid: Number(f[2]), home: '', members: (f[3] ?? '').split(',').filter(Boolean) };
    });
}

const numeric = (s: string): number | undefined => (/^\d+$/.test(s) ? Number(s) : undefined);

/** An entry named or numbered `arg`, or, for a number in no entry, that number alone (undefined: neither). */
function lookUp(arg: string, all: readonly Entry[]): { id: number; entry?: Entry } | undefined {
  const entry = all.find((e) => e.name === arg || e.id === numeric(arg));
  if (entry !== undefined) return { id: entry.id, entry };
  const id = numeric(arg);
  return id === undefined ? undefined : { id };
}

/**
 * moby/sys/user's `GetExecUser` over the image's files: `user[:group]`; a uid in no entry gets gid 0; without a
 * group, the groups that list the user by name are supplementary.
 */
function execUser(
  spec: string,
  users: readonly Entry[],
  groups: readonly Entry[],
): { uid: number; gid: number; sgids: number[] } {
  const [userArg = '', groupArg] = spec.split(':');
  const user = lookUp(userArg, users);
  if (user === undefined) throw new Error(`no user ${userArg} in the image's /etc/passwd`);
  if (groupArg === undefined) {
    const name = user.entry?.name;
    const sgids = name === undefined ? [] : groups.filter((g) => g.members.includes(name)).map((g) => g.id);
    return { uid: user.id, gid: user.entry?.gid ?? 0, sgids };
  }
  const group = lookUp(groupArg, groups);
  if (group === undefined) throw new Error(`no group ${groupArg} in the image's /etc/group`);
  return { uid: user.id, gid: group.id, sgids: [] };
}

export function processUser(context: UserContext, image: ImageUser): ProcessUser {
  const containerUser = context.runAsUser === undefined ? image.user : String(context.runAsUser);
  const users = entries(image.passwd, 'passwd');
  const groupEntries = entries(image.group, 'group');
  const { uid, gid, sgids } = execUser(containerUser, users, groupEntries);
  let passwd = image.passwd;
  if (!users.some((u) => u.id === uid)) {
    const home = image.home ?? image.workingDir;
    passwd += `${containerUser}:x:${uid}:${gid}:${containerUser} user:${home}:/sbin/nologin\n`;
  }
  const processGid = context.runAsGroup ?? gid;
  let group = image.group;
  if (!groupEntries.some((e) => e.id === processGid)) group += `${processGid}:x:${processGid}:\n`;
  const kubelet = [...(context.supplementalGroups ?? []), ...(context.fsGroup === undefined ? [] : [context.fsGroup])];
  return {
    uid,
    gid: processGid,
    groups: [processGid, ...sgids, ...kubelet].sort((a, b) => a - b),
    home: image.home ?? entries(passwd, 'passwd').find((u) => u.id === uid)?.home ?? '/',
    passwd,
    group,
  };
}

/** A file's or a folder's owner and mode. */
export interface Ownership {
  readonly uid: number;
  readonly gid: number;
  readonly mode: number;
}

/**
 * What the kubelet makes of one entry of a volume: a `folder` (the volume's own), a `file` of a secret or of the
 * projected service account volume, or that volume's `token`. `fsUser` is the pod's `FsUserFrom`: its one
 * runAsUser, if every container has it.
 */
export function volumeOwnership(entry: 'folder' | 'file' | 'token', fsUser?: number, fsGroup?: number): Ownership {
  const personal = entry === 'token' && (fsUser !== undefined || fsGroup !== undefined);
  const base: Ownership = {
    uid: entry === 'token' ? (fsUser ?? 0) : 0,
    gid: 0,
    mode: entry === 'folder' ? 0o755 : personal ? 0o600 : 0o644,
  };
  if (fsGroup === undefined) return base;
  const mask = entry === 'folder' ? 0o550 | 0o2000 : 0o440;
  return { uid: base.uid, gid: fsGroup, mode: base.mode | mask };
}
