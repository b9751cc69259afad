import type { ClassKind } from '../../classes/class-kinds.js';
import type { SnapshotClass } from '../../schemas/types.js';
import { field, immutable, immutableOnceSet, type Check } from '../checks.js';
import { defaultClassCheck } from '../default-class.js';

const driver = field<SnapshotClass>('Driver', (c) => c.driver);
const deletionPolicy = field<SnapshotClass>('DeletionPolicy', (c) => c.deletionPolicy);
const parameters = field<SnapshotClass>('Parameters', (c) => c.parameters, { secret: true });

export function classChecks(kind: ClassKind, immutableSettings: boolean): readonly Check<SnapshotClass>[] {
  const settings = immutableSettings ? [immutable(driver), immutable(deletionPolicy), immutableOnceSet(parameters)] : [];
  return [...settings, defaultClassCheck(kind)];
}
