import type { ClassKind } from '../classes/class-kinds.js';
import type { Check, Field } from './checks.js';
import { warn } from './finding.js';
import { sameValue } from './values.js';
import { BOUNDS } from '../limits/bounds.js';

/**
 * A snapshot that names a class the cache does not know will wait forever for it; say so, but allow: the
 * class may be created next (GitOps tools apply in any order).
 */
export function classExistsWarning<T>(kind: ClassKind, className: Field<T>): Check<T> {
  return ({ object, oldObject, classes }) => {
    const name = className.get(object);
    if (typeof name !== 'string' || name === '') return undefined;
    if (oldObject !== undefined && sameValue(className.get(oldObject), name)) return undefined;
    if (classes.exists(kind, name) !== false) return undefined;
    const shown = name.length > BOUNDS.classNameShownChars ? `${name.slice(0, BOUNDS.classNameShownChars - 3)}...` : name;
    return warn('class-not-found', `${kind} ${shown} does not exist (yet); the snapshot waits until it does`, {
      missingClass: { kind, name },
    });
  };
}
