// Types of tools.mjs for the TypeScript suites.
export declare const TOOLS: Readonly<Record<string, readonly [string, string]>>;
export declare function findTool(
  name: string,
): { dir: string; archive: string; missing?: undefined } | { missing: string; dir?: undefined; archive?: undefined };
export declare function unpackTool(name: string, dest: string): string;
export declare function findUpstreamCrds(): { dir: string; missing?: undefined } | { missing: string; dir?: undefined };
