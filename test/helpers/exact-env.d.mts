// Types of exact-env.mjs for the TypeScript suites.
export declare function withExactEnv(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): [string, string[]];
export declare function baseEnv(): Record<string, string | undefined>;
