// Types of deployment.mjs for the TypeScript suites.
export declare function deploymentNodeOptions(): string;
export declare function deploymentEnv(): Record<string, string>;
export declare function deploymentArgs(paths: { cert: string; key: string }, port: number | string): string[];
export declare function memoryLimitMb(): number;
export declare function gracePeriodMs(): number;
export declare function deploymentReadOnlyRoot(): boolean;
