/**
 * Every size, count and length limit on what a request (or a cluster) controls, named once with its reason.
 * docs/reliability.md ("Bounds") lists them; test/unit/bounds.test.ts keeps that list and this one equal, and keeps
 * numeric `.slice(0, N)` out of src/.
 */
export const BOUNDS = {
  bodyBytes: 7 * 1024 * 1024,
  jsonContainers: 100_000,
  connections: 500,
  handshakes: 200,
  warningChars: 119,
  shownChars: 256,
  echoChars: 100,
  kindChars: 60,
  nameChars: 253,
  driverChars: 63,
  classNameShownChars: 63,
  idChars: 64,
  nearMissChars: 12,
  unhandledResourceChars: 68,
  parseErrorChars: 200,
  apiserverMessageChars: 300,
  eventMessageChars: 1024,
  logItems: 50,
  logStringChars: 200,
  logDepth: 12,
  clientNamesLogged: 5,
  driverSeries: 100,
  liveClaims: 100,
  pageSize: 500,
  handshakeLogSeconds: 60,
  watchLineChars: 4 * 1024 * 1024,
  decisionsHeld: 1000,
} as const;

export type BoundName = keyof typeof BOUNDS;

export const BOUND_REASONS: Readonly<Record<BoundName, string>> = {
  bodyBytes: 'request body: an AdmissionReview carries the object and the old object, each capped near 3 MiB by the apiserver',
  jsonContainers:
    'JSON objects and arrays in a body: a snapshot object has a few hundred; 7 MiB of `[]` would take hundreds of MB of heap',
  connections:
    'open connections to the HTTPS port, idle ones closed first at the limit: at about 140 KB of RSS each, a flood stays inside the 192 Mi pod limit',
  handshakes:
    'connections still in their TLS handshake, on top of `connections`; past it the oldest is closed, so a stalled flood cannot starve the apiserver',
  warningChars: 'one AdmissionReview warning: kubectl prints each on its own line',
  shownChars: 'a request value echoed in a message, before it is cut with its length',
  echoChars: "a request's URL, content type, uid or apiVersion in a log line or an error answer",
  kindChars: 'a kind echoed in a conversion message (the longest real kind has 26 characters)',
  nameChars: "an object's name in a conversion message and a claim: Kubernetes' limit for a name",
  driverChars: "a driver in a metric label and a claim: a CSI driver name's limit",
  classNameShownChars: 'a class name in the class-not-found warning, which must fit in `warningChars`',
  idChars: 'a uid or resourceVersion in a claim (a uid has 36 characters)',
  nearMissChars: 'the annotation value quoted by the near-miss warning',
  unhandledResourceChars: 'the resource named by the unhandled-resource warning, so the warning fits warningChars whole',
  parseErrorChars: "JSON.parse's message about an annotation that is not JSON",
  apiserverMessageChars: "an apiserver's error text kept for logs and readiness",
  eventMessageChars: 'the message of a denial Event: 1 KB, the note limit of events.k8s.io/v1',
  logItems: 'keys of an object and items of an array in a redacted log field',
  logStringChars: 'a string in a debug log: enough to recognise, not enough to flood',
  logDepth: 'nesting of a redacted log field, past which it reads `[too deep]`',
  clientNamesLogged: 'names of a refused client certificate in its log line',
  driverSeries: 'drivers per class kind in the default_classes gauge, the most defaults first: a double default always shows',
  handshakeLogSeconds:
    'seconds between two log lines about failed TLS handshakes of one reason (each failure is counted in a metric): a flood of bad handshakes is a line a minute',
  liveClaims: 'claims younger than the claim window in one Lease; beyond it new defaults are refused with 503',
  pageSize: 'objects per list page of `audit`: one page of the largest snapshot objects stays a few MB',
  watchLineChars:
    'one event of a class watch: etcd keeps an object under 1.5 MiB; a longer line ends the watch with an error, and it is retried',
  decisionsHeld:
    'answered reviews waiting for the end of the event-loop turn to be logged and counted; at the bound they are recorded at once',
};
