// Types of netns.mjs for the TypeScript suites.
export declare function reexecInNetns(onRefused: (why: string) => void): void;
