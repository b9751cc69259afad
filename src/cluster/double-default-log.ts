import { CLASS_KIND_FACTS } from '../classes/class-kinds.js';
import type { DefaultsChanged } from '../classes/class-index.js';
import type { Logger } from '../log/logger.js';
import { shown } from '../rules/values.js';

/** One warning when a driver first has more than one default, one line when it is back to one or none. */
export function doubleDefaultLog(logger: Logger): DefaultsChanged {
  return (kind, driver, from, to) => {
    const fields = { kind, driver: shown(driver), defaults: to };
    if (from <= 1 && to > 1)
      logger.warn(
        fields,
        `more than one default ${kind} for a driver: new ${CLASS_KIND_FACTS[kind].dependents} without a class fail until only one is the default`,
      );
    else if (from > 1 && to <= 1) logger.info(fields, `one default ${kind} or none for the driver again`);
  };
}
