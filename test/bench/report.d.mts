// Types of the part of report.mjs the TypeScript suites use.
export declare function failureLine(output: string): string;
