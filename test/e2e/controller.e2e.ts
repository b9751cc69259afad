// The real snapshot-controller as a client of the webhook registered as shipped (the flows are in
// controller-flows.ts). The controllers are built by the user from external-snapshotter's releases (README "The
// tools folder"): without them the file skips with one line naming the missing one.
import t from 'tap';
import { missingTool } from '../helpers/tools.mjs';
import { kube } from './kube.js';

// On 1.36 the v8.4.0 controller also takes over what v8.6.0 wrote.
const needed = kube.celLive ? [kube.controllerTool, 'snapshot-controller'] : [kube.controllerTool];
const missing = missingTool(...needed);
if (missing !== undefined) t.plan(0, missing);
else (await import('./controller-flows.js')).controllerFlows([]);
