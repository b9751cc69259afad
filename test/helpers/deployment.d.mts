// Types of deployment.mjs for the TypeScript suites.
export declare function deploymentNodeOptions(): string;
export declare function deploymentEnv(): Record<string, string>;
export declare function deploymentArgs(paths: { cert: string; key: string } | undefined, port: number | string): string[];
export declare function memoryLimitMb(): number;
export declare function gracePeriodMs(): number;
export declare function deploymentSecurity(): {
  user: number | undefined;
  group: number | undefined;
  readOnlyRoot: boolean;
  noNewPrivileges: boolean;
  dropAllCapabilities: boolean;
  addedCapabilities: string[];
  seccompProfile: string | undefined;
};
export declare function deploymentSecretMounts(): { mountPath: string; secretName: string }[];
