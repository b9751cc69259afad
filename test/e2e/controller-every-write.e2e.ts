// The real snapshot-controller under the strictest registration: every snapshot write sent to the webhook with
// failurePolicy Fail (the component without-match-conditions: upstream's own configuration, which a drop-in user
// keeps, and this project's path for 1.21 to 1.29). On 1.20 the shipped registration is already that one
// (controller.e2e.ts runs it), so this file runs where matchConditions exist.
import t from 'tap';
import { missingTool } from '../helpers/tools.mjs';
import { kube } from './kube.js';

const needed = kube.celLive ? [kube.controllerTool, 'snapshot-controller'] : [kube.controllerTool];
const missing = missingTool(...needed);
if (!kube.admissionPolicies)
  t.plan(0, `on ${kube.version} the shipped registration already sends every write (controller.e2e.ts)`);
else if (missing !== undefined) t.plan(0, missing);
else (await import('./controller-flows.js')).controllerFlows(['without-match-conditions']);
