import { CLASS_KIND_FACTS, type ClassKind } from '../classes/class-kinds.js';

export interface PolicyOptions {
  /** Also the policy for VolumeGroupSnapshotClass. */
  readonly groupSnapshots: boolean;
  /** admissionregistration.k8s.io version: v1 (Kubernetes 1.30+) or v1beta1 (1.28, 1.29 with the beta on). */
  readonly apiVersion: 'v1' | 'v1beta1';
  /** The served groupsnapshot.storage.k8s.io version the group class params are read at. */
  readonly groupVersion: string;
  readonly namePrefix: string;
}

/** The version a policy reads each kind's classes at: snapshot classes at v1, group classes as the option says. */
const paramVersion = (kind: ClassKind, options: PolicyOptions): string =>
  kind === 'VolumeSnapshotClass' ? 'v1' : options.groupVersion;

/** A CEL test that `value` (an object) carries the default annotation with exactly "true". */
const isDefault = (value: string, annotation: string): string =>
  `(has(${value}.metadata.annotations) && '${annotation}' in ${value}.metadata.annotations && ` +
  `${value}.metadata.annotations['${annotation}'] == 'true')`;

/**
 * The default-class rule of docs/rules.md as a ValidatingAdmissionPolicy and its binding, for one class kind.
 * The binding selects every class as a param (`paramRef.selector: {}`), so the apiserver runs the validation
 * once per existing class: another class of the same driver that is a default denies. matchConditions leave
 * out what the rule allows outright (not a default; an UPDATE of a class that already was a default for the
 * same driver); params are collected before matchConditions, so `parameterNotFoundAction` must be `Allow`.
 */
export function defaultClassPolicy(kind: ClassKind, options: PolicyOptions): Record<string, unknown>[] {
  const { group, resource, defaultAnnotation: annotation, denialPrefix } = CLASS_KIND_FACTS[kind];
  const name = `${options.namePrefix}one-default-${kind.toLowerCase()}-per-driver`;
  const apiVersion = `admissionregistration.k8s.io/${options.apiVersion}`;
  const policy = {
    apiVersion,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: `${group}/${paramVersion(kind, options)}`, kind },
      matchConstraints: {
        resourceRules: [{ apiGroups: [group], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: [resource] }],
      },
      matchConditions: [
        { name: 'object-is-default', expression: isDefault('object', annotation) },
        {
          name: 'not-already-default-for-same-driver',
          expression: `request.operation != 'UPDATE' || !${isDefault('oldObject', annotation)} || oldObject.driver != object.driver`,
        },
      ],
      validations: [
        {
          expression: `params.metadata.name == object.metadata.name || params.driver != object.driver || !${isDefault('params', annotation)}`,
          // The words of secondDefaultMessage (classes/class-kinds.ts), so that both paths deny alike.
          messageExpression:
            `'${denialPrefix}: ' + params.metadata.name + ' already exists for driver: ' + object.driver + ` +
            `'; to move the default, first remove it from ' + params.metadata.name + ': kubectl annotate ${resource} ' + ` +
            `params.metadata.name + ' ${annotation}-'`,
        },
      ],
    },
  };
  const binding = {
    apiVersion,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'], paramRef: { selector: {}, parameterNotFoundAction: 'Allow' } },
  };
  return [policy, binding];
}

/** Every policy and binding the options ask for, VolumeSnapshotClass first. */
export function defaultClassPolicies(options: PolicyOptions): Record<string, unknown>[] {
  const kinds: ClassKind[] = options.groupSnapshots
    ? ['VolumeSnapshotClass', 'VolumeGroupSnapshotClass']
    : ['VolumeSnapshotClass'];
  return kinds.flatMap((kind) => defaultClassPolicy(kind, options));
}
