// Types of tools.mjs for the TypeScript suites.
export declare const TOOLS: Readonly<
  Record<string, { readonly folder: string; readonly file: string; readonly what: string; readonly optional?: boolean }>
>;
type FoundDir = { dir: string; missing?: undefined } | { missing: string; dir?: undefined };
export declare function findTool(name: string): { file: string; missing?: undefined } | { missing: string; file?: undefined };
export declare function missingTool(...names: string[]): string | undefined;
export declare function unpackTool(name: string, dest: string): string;
export declare function findUpstreamCrds(): FoundDir;
export declare function findControllerCrds(): FoundDir;
export declare function toolReport(): string[];
