import type { KubeConfig } from '@kubernetes/client-node';
import { CLASS_KIND_FACTS } from '../classes/class-kinds.js';
import { statusOf } from './apiserver-error.js';
import { kubeExchange } from './kube-http.js';

/** A VolumeSnapshotClass as `check` reads and writes it. */
export interface CheckClass {
  readonly metadata: {
    readonly name: string;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly driver?: string;
}

/** The write of a class: admitted, or what the apiserver said instead. */
export type WriteAnswer =
  { readonly admitted: true } | { readonly admitted: false; readonly status: number | undefined; readonly message: string };

/** What a webhook configuration or policy binding registers for VolumeSnapshotClass writes. */
export interface Registrations {
  /** Any webhook or policy binding that class CREATEs reach. */
  readonly registered: boolean;
  /** Those of them with matchConditions (the base, which leaves per-object checks to CRD CEL rules). */
  readonly withMatchConditions: readonly string[];
}

/** The apiserver calls `snapshot-webhook check` makes; an in-memory fake in unit tests. */
export interface CheckCluster {
  classesServed(): Promise<boolean>;
  listClasses(): Promise<CheckClass[]>;
  createClass(body: CheckClass, dryRun: boolean): Promise<WriteAnswer>;
  deleteClass(name: string): Promise<void>;
  registrations(): Promise<Registrations>;
  /** Whether a CRD's schema carries CEL rules; undefined when it is not installed. */
  crdHasCel(name: string): Promise<boolean | undefined>;
  /** The error of a dry-run group class create at a version that needs conversion; undefined when none fails. */
  conversionFailure(): Promise<string | undefined>;
}

const { group, resource } = CLASS_KIND_FACTS.VolumeSnapshotClass;
const CLASSES = `/apis/${group}/v1/${resource}`;
const GROUP_CLASSES = CLASS_KIND_FACTS.VolumeGroupSnapshotClass;
/** Each call's own bound: longer than the longest webhook timeout (30 s, the API's maximum) it may wait for. */
const CALL_MS = 35_000;

interface Rule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly operations?: readonly string[];
}
const covers = (rule: Rule): boolean =>
  (rule.apiGroups ?? []).some((g) => g === group || g === '*') &&
  (rule.resources ?? []).some((r) => r === resource || r === '*') &&
  (rule.operations ?? []).some((o) => o === 'CREATE' || o === '*');

interface CrdVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
}

export function checkCluster(kc: KubeConfig): CheckCluster {
  const get = async <T>(path: string): Promise<T> => (await kubeExchange<T>(kc, 'GET', path, undefined, CALL_MS)).body;
  const write = async (path: string, body: unknown): Promise<WriteAnswer> => {
    try {
      await kubeExchange(kc, 'POST', path, body, CALL_MS);
      return { admitted: true };
    } catch (error) {
      const status = statusOf(error);
      if (status === undefined) throw error;
      return { admitted: false, status, message: (error as Error).message.replace(/^POST \S+: HTTP \d+: /, '') };
    }
  };
  /** A GET that answers undefined where the apiserver answers 404 (a group, kind or CRD not installed). */
  const getIfFound = <T>(path: string): Promise<T | undefined> =>
    get<T>(path).catch((error: unknown) => {
      if (statusOf(error) === 404) return undefined;
      throw error;
    });
  const crd = (name: string) =>
    getIfFound<{ spec: { versions: CrdVersion[]; conversion?: { strategy?: string } } }>(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
  return {
    async classesServed() {
      const list = await getIfFound<{ resources: { name: string }[] }>(`/apis/${group}/v1`);
      return list?.resources.some((r) => r.name === resource) ?? false;
    },
    async listClasses() {
      return (await get<{ items: CheckClass[] }>(CLASSES)).items;
    },
    createClass: (body, dryRun) => write(`${CLASSES}${dryRun ? '?dryRun=All' : ''}`, body),
    async deleteClass(name) {
      try {
        await kubeExchange(kc, 'DELETE', `${CLASSES}/${name}`, undefined, CALL_MS);
      } catch (error) {
        if (statusOf(error) !== 404) throw error;
      }
    },
    async registrations() {
      type Webhook = { name: string; rules?: Rule[]; matchConditions?: unknown[] };
      const hooks = await get<{ items: { webhooks?: Webhook[] }[] }>(
        '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      );
      const matching = hooks.items.flatMap((c) => c.webhooks ?? []).filter((w) => (w.rules ?? []).some(covers));
      // The policy-only overlay: a binding of a policy whose match covers class creates (the API exists from 1.30).
      type Policy = { spec?: { matchConstraints?: { resourceRules?: Rule[] } } };
      const policies = await getIfFound<{ items: Policy[] }>('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies');
      const policy = (policies?.items ?? []).some((p) => (p.spec?.matchConstraints?.resourceRules ?? []).some(covers));
      return {
        registered: matching.length > 0 || policy,
        withMatchConditions: [...new Set(matching.filter((w) => (w.matchConditions ?? []).length > 0).map((w) => w.name))],
      };
    },
    async crdHasCel(name) {
      const found = await crd(name);
      return found === undefined ? undefined : JSON.stringify(found.spec).includes('"x-kubernetes-validations"');
    },
    async conversionFailure() {
      const spec = (await crd(`${GROUP_CLASSES.resource}.${GROUP_CLASSES.group}`))?.spec;
      if (spec?.conversion?.strategy !== 'Webhook') return undefined;
      // A create at a served version other than the stored one is converted before it is stored (dry run: not stored).
      const other = spec.versions.find((v) => v.served && !v.storage);
      if (other === undefined) return undefined;
      const answer = await write(`/apis/${GROUP_CLASSES.group}/${other.name}/${GROUP_CLASSES.resource}?dryRun=All`, {
        apiVersion: `${GROUP_CLASSES.group}/${other.name}`,
        kind: 'VolumeGroupSnapshotClass',
        metadata: { name: 'snapshot-webhook-check-conversion' },
        driver: 'check.snapshot-webhook.invalid',
        deletionPolicy: 'Delete',
      });
      return !answer.admitted && answer.message.includes('conversion webhook') ? answer.message : undefined;
    },
  };
}
