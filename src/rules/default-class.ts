import { secondDefaultMessage, type ClassKind } from '../classes/class-kinds.js';
import { annotationValue, isDefaultClass, wasAlreadyDefault } from '../classes/default-annotation.js';
import type { SnapshotClass } from '../schemas/types.js';
import type { Check } from './checks.js';
import { deny, warn, type Finding } from './finding.js';
import { shown } from './values.js';
import { BOUNDS } from '../limits/bounds.js';

/** Values people write meaning "true" that the snapshot-controller does not take as a default. */
const NEAR_MISS = /^\s*(true|yes|y|on|1|enabled?)\s*$/i;

function nearMissWarning(kind: ClassKind, value: string | undefined): Finding | undefined {
  if (value === undefined || value === 'true' || !NEAR_MISS.test(value)) return undefined;
  const shown = value.length > BOUNDS.nearMissChars ? `${value.slice(0, BOUNDS.nearMissChars)}...` : value;
  return warn(
    'default-annotation-near-miss',
    `is-default-class is ${JSON.stringify(shown)}, not "true": this ${kind} is NOT a default`,
  );
}

/**
 * The single-default-class rule (docs/rules.md, "The default-class rule"): a class may become the default for its
 * driver only when no other class already is.
 */
export function defaultClassCheck(kind: ClassKind): Check<SnapshotClass> {
  return ({ object, oldObject, classes }) => {
    const nearMiss = nearMissWarning(kind, annotationValue(kind, object));
    if (nearMiss !== undefined) return nearMiss;
    if (!isDefaultClass(kind, object)) return undefined;
    const driver = object.driver ?? '';
    const name = object.metadata.name ?? '';
    const defaults = classes.defaultsFor(kind, driver);
    if (wasAlreadyDefault(kind, object, oldObject))
      return existingDoubleDefault(kind, driver, name, defaults.ok ? defaults.names : []);
    if (!defaults.ok) {
      return deny(
        'class-cache-unavailable',
        `cannot check whether another default ${kind} exists for driver ${shown(driver)}: ${defaults.reason}; retry shortly`,
        { code: 503 },
      );
    }
    const other = defaults.names.find((n) => n !== name);
    if (other === undefined) return undefined;
    const { message, short } = secondDefaultMessage(kind, other, shown(driver));
    return deny('default-class-unique', message, { conflictsWith: other, warningMessage: short });
  };
}

function existingDoubleDefault(kind: ClassKind, driver: string, name: string, names: readonly string[]): Finding | undefined {
  const others = names.filter((n) => n !== name);
  if (others.length === 0) return undefined;
  return warn('existing-double-default', `driver ${shown(driver)} has ${others.length + 1} default ${kind}es; keep only one`);
}
