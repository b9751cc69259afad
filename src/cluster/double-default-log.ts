import { CLASS_KIND_FACTS } from '../classes/class-kinds.js';
import type { DefaultsChanged } from '../classes/class-index.js';
import type { Logger } from '../log/logger.js';
import { shown } from '../rules/values.js';

/**
 * A warning each time the number of defaults of a driver changes while it is above one (with the number, so the
 * last line of a driver says what the `default_classes` gauge says), one line when it is back to one or none.
 * Lines come only from class writes, which people make.
 */
export function doubleDefaultLog(logger: Logger): DefaultsChanged {
  return (kind, driver, from, to) => {
    const fields = { kind, driver: shown(driver), defaults: to };
    if (to > 1)
      logger.warn(
        fields,
        `more than one default ${kind} for a driver: new ${CLASS_KIND_FACTS[kind].dependents} without a class fail until only one is the default`,
      );
    else if (from > 1) logger.info(fields, `one default ${kind} or none for the driver again`);
  };
}
