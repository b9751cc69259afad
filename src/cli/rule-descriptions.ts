import type { ManifestFinding } from './check-manifests.js';

type FindingRule = ManifestFinding['rule'];

/**
 * One line per rule id, for SARIF's rule descriptors; docs/rules.md has a heading per id with the same line
 * (a test keeps them equal).
 */
export const RULE_DESCRIPTIONS: Readonly<Record<FindingRule, string>> = {
  'source-exactly-one': 'Exactly one source must be set.',
  'field-not-empty': 'A name or handle that is set must not be the empty string.',
  'field-immutable': 'A field that cannot change after creation was changed.',
  'ref-name-namespace-set': "A content's reference to its snapshot must name both the snapshot and its namespace.",
  'default-class-unique': 'A driver may have only one default class of each kind.',
  'class-cache-unavailable': 'The webhook cannot see the classes of the cluster, so it cannot check for another default.',
  'default-claim-unavailable': "The webhook's replicas could not agree on a new default class; retry shortly.",
  'object-undecodable': 'The object is not of the shape its kind requires.',
  'default-annotation-near-miss': 'The default-class annotation is set, but not to exactly "true", so it has no effect.',
  'class-not-found': 'The class the object names does not exist (yet).',
  'deprecated-version': 'The API version is deprecated; use v1.',
  'existing-double-default': 'The driver already has more than one default class; keep only one.',
  'unhandled-resource': 'The webhook was sent a resource it does not check.',
  'yaml-syntax': 'The file or document cannot be read as YAML or JSON.',
  'cannot-list': 'The cluster could not be listed for this kind.',
  'unknown-kind': 'An object of the snapshot API groups whose kind or version the webhook does not know.',
  'not-ready': 'A VolumeSnapshot that is not ready to use, with the cause snapshot-webhook explain names (audit only).',
};
