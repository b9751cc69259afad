// checkOnce and runChecks against an in-memory cluster that answers as the apiserver does with the webhook in front
// of it: what is written and deleted, the lines and the exit status, and the retries of --wait.
import t from 'tap';
import { runChecks } from '../../src/cli/check-command.js';
import { checkOnce } from '../../src/cli/live-check.js';
import type { CheckClass, CheckCluster, WriteAnswer } from '../../src/cluster/live-check-api.js';

const ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';
const isDefault = (c: CheckClass): boolean => c.metadata.annotations?.[ANNOTATION] === 'true';

/** A cluster with `classes`, whose webhook denies a second default for a driver, or fails with `down`. */
function fakeCluster(options: { classes?: CheckClass[]; down?: string; deleteFails?: boolean; served?: boolean } = {}) {
  const classes = [...(options.classes ?? [])];
  const log: string[] = [];
  const cluster: CheckCluster = {
    classesServed: async () => options.served ?? true,
    listClasses: async () => [...classes],
    async createClass(body, dryRun): Promise<WriteAnswer> {
      log.push(`${dryRun ? 'dry-run ' : ''}create ${body.metadata.name}`);
      if (options.down !== undefined) return { admitted: false, status: 500, message: options.down };
      const other = classes.find((c) => isDefault(c) && c.driver === body.driver);
      if (other !== undefined)
        return {
          admitted: false,
          status: 400,
          message: `admission webhook "v" denied the request: default snapshot class: ${other.metadata.name} already exists for driver: ${body.driver ?? ''}`,
        };
      if (!dryRun) classes.push(body);
      return { admitted: true };
    },
    async deleteClass(name) {
      log.push(`delete ${name}`);
      if (options.deleteFails === true) throw new Error('HTTP 403: forbidden');
      classes.splice(
        classes.findIndex((c) => c.metadata.name === name),
        1,
      );
    },
    registrations: async () => ({ registered: true, withMatchConditions: [] }),
    crdHasCel: async () => true,
    conversionFailure: async () => undefined,
  };
  return { cluster, classes, log };
}

const existing: CheckClass = { metadata: { name: 'fast', annotations: { [ANNOTATION]: 'true' } }, driver: 'd.example.com' };

t.test('a default exists: one dry run for its driver, nothing written', async (t) => {
  const { cluster, log } = fakeCluster({ classes: [existing] });
  const result = await checkOnce(cluster, 'x');
  t.same(
    { live: result.live, driver: result.driver, causes: result.causes },
    { live: true, driver: 'd.example.com', causes: [] },
  );
  t.same(log, ['dry-run create snapshot-webhook-check-x']);
});

t.test('no default: a first default of its own, the dry run, then the first deleted', async (t) => {
  const { cluster, classes, log } = fakeCluster();
  const result = await checkOnce(cluster, 'x');
  t.ok(result.live);
  t.equal(result.driver, 'x.check.snapshot-webhook.invalid');
  t.same(log, [
    'create snapshot-webhook-check-x-first',
    'dry-run create snapshot-webhook-check-x',
    'delete snapshot-webhook-check-x-first',
  ]);
  t.same(classes, [], 'nothing left');
});

t.test('the first default cannot be deleted: live, but the cleanup cause says which class to delete', async (t) => {
  const { cluster } = fakeCluster({ deleteFails: true });
  const result = await checkOnce(cluster, 'x');
  t.equal(result.live, false);
  t.same(
    result.causes.map((c) => c.cause),
    ['cleanup'],
  );
  t.match(result.causes[0]?.message ?? '', 'snapshot-webhook-check-x-first that check made could not be deleted');
});

t.test('no CRDs: the crds cause and no write', async (t) => {
  const { cluster, log } = fakeCluster({ served: false });
  t.same(
    (await checkOnce(cluster, 'n')).causes.map((c) => c.cause),
    ['crds'],
  );
  t.same(log, []);
});

t.test('--wait: a line per try, every 2 s, until the deadline; exit 1', async (t) => {
  const down =
    'Internal error occurred: failed calling webhook "v": Post "https://h/validate": dial tcp h: connect: connection refused';
  const { cluster } = fakeCluster({ down });
  let out = '';
  let clock = 0;
  const slept: number[] = [];
  const status = await runChecks(cluster, {
    waitMs: 5_000,
    output: 'text',
    write: (text) => (out += text),
    now: () => clock,
    sleep: async (ms) => {
      slept.push(ms);
      clock += ms;
    },
  });
  t.equal(status, 1);
  t.same(slept, [2_000, 2_000], 'tries at 0, 2 and 4 s; a fourth would end past 5 s');
  t.equal(out.match(/^Not ready: v refuses connections at https:\/\/h\/validate: /gm)?.length, 3, 'one line per try');
});

t.test('-o json: the last try with its causes by id and the tries', async (t) => {
  let out = '';
  const status = await runChecks(fakeCluster({ classes: [existing] }).cluster, {
    waitMs: 0,
    output: 'json',
    write: (text) => (out += text),
  });
  t.equal(status, 0);
  const answer = JSON.parse(out) as Record<string, unknown>;
  t.same(
    { live: answer.live, causes: answer.causes, driver: answer.driver, tries: answer.tries },
    { live: true, causes: [], driver: 'd.example.com', tries: 1 },
  );
});
