// The one builder of AdmissionReview envelopes for tests, fixtures and benches: the request half as the
// kube-apiserver sends it (uid, kind, resource, operation, then any other request field, then the objects).
// Plain JavaScript so that the fixture generator and the benches (.mjs) use it as the TypeScript suites do.

/**
 * @param {{ group: string, version: string, kind: string, resource: string }} target
 * @param {{ uid?: string, operation?: string, object?: unknown, oldObject?: unknown } & Record<string, unknown>} request
 * @param {string} [apiVersion]
 */
export function admissionReview(target, request, apiVersion = 'admission.k8s.io/v1') {
  const { uid = 'u', operation = 'CREATE', object, oldObject, ...other } = request;
  const { group, version, kind, resource } = target;
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group, version, kind },
      resource: { group, version, resource },
      operation,
      ...other,
      ...(object === undefined ? {} : { object }),
      ...(oldObject === undefined ? {} : { oldObject }),
    },
  };
}

/** The targets the suites use most. */
export const SNAPSHOT_CLASS_V1 = {
  group: 'snapshot.storage.k8s.io',
  version: 'v1',
  kind: 'VolumeSnapshotClass',
  resource: 'volumesnapshotclasses',
};
export const SNAPSHOT_V1 = {
  group: 'snapshot.storage.k8s.io',
  version: 'v1',
  kind: 'VolumeSnapshot',
  resource: 'volumesnapshots',
};
