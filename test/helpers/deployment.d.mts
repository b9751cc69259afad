// Types of deployment.mjs for the TypeScript suites.
export declare function deploymentNodeOptions(): string;
export declare function deploymentEnv(): Record<string, string>;
export declare function renderedManifests(components: readonly string[]): ({ kind?: string } & Record<string, unknown>)[];
export declare function renderedEnv(components: readonly string[]): Record<string, string>;
export declare function deploymentArgs(paths: { cert: string; key: string } | undefined, port?: number | string): string[];
export declare function memoryLimitMb(): number;
export declare function gracePeriodMs(): number;
/** The container's security settings (deploymentSecurity). */
export interface DeploymentSecurity {
  runAsUser: number | undefined;
  runAsGroup: number | undefined;
  runAsNonRoot: boolean;
  fsGroup: number | undefined;
  supplementalGroups: number[];
  readOnlyRoot: boolean;
  noNewPrivileges: boolean;
  dropAllCapabilities: boolean;
  addedCapabilities: string[];
  seccompProfile: string | undefined;
}
/** `pod`: a pod template's spec; manifests/base/deployment.yaml's when not given. */
export declare function deploymentSecurity(pod?: object): DeploymentSecurity;
export declare function deploymentSecretMounts(): { mountPath: string; secretName: string }[];
