// Types of servers.mjs for the TypeScript suites (what cluster-mode.ts uses).
export declare function peakRssMb(pid: number): number;
export declare function runLoad(options: Record<string, unknown>, onWindow?: () => void): Promise<unknown>;
