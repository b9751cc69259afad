import type { FlagSpec } from '../config/flags.js';
import { packageVersion } from '../config/version.js';
import { RULE_DESCRIPTIONS } from './rule-descriptions.js';
import type { CheckSummary, ManifestFinding } from './check-manifests.js';

export const OUTPUT_FORMATS = ['text', 'json', 'sarif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The flags of every command that reports findings (validate, audit), after its own. */
export const FINDING_FLAGS: readonly FlagSpec[] = [
  {
    name: 'output',
    short: 'o',
    type: 'string',
    default: 'text',
    values: OUTPUT_FORMATS,
    help: 'text, json (documented in docs/cli.md) or sarif',
  },
  { name: 'prevent-volume-mode-conversion', type: 'bool', default: 'true', help: 'as for serve' },
  { name: 'help', type: 'bool', help: 'print this help' },
];

/** The findings in the chosen format. */
export function formatFindings(format: OutputFormat, findings: readonly ManifestFinding[], summary: CheckSummary): string {
  if (format === 'json') return formatJson(findings, summary);
  return format === 'sarif' ? formatSarif(findings) : formatText(findings, summary);
}

/** 0: every input read and nothing denied; 1: something would be denied; 2: something could not be read. */
export function exitStatus(summary: CheckSummary): number {
  if (summary.unreadable > 0) return 2;
  return summary.denied > 0 ? 1 : 0;
}

function who(f: ManifestFinding): string {
  const name = f.name ?? '<unnamed>';
  return f.namespace === undefined ? `${f.kind} ${name}` : `${f.kind} ${f.namespace}/${name}`;
}

export function summaryLine(s: CheckSummary): string {
  return `${s.checked} checked, ${s.denied} denied, ${s.warnings} ${s.warnings === 1 ? 'warning' : 'warnings'}, ${s.skipped} skipped (not snapshot kinds), ${s.unreadable} unreadable`;
}

/** `file:line: Kind namespace/name: message`, the form editors and CI logs jump from. */
export function formatText(findings: readonly ManifestFinding[], summary: CheckSummary): string {
  const lines = findings.map((f) => {
    const mark = f.severity === 'warning' ? 'warning: ' : '';
    // Line 0: not from a file (audit names the API version the object was read at, or `defaults`).
    const at = f.line > 0 ? `${f.file}:${f.line}` : f.file;
    return f.kind === '' ? `${at}: ${f.message}` : `${at}: ${who(f)}: ${mark}${f.message}`;
  });
  return [...lines, summaryLine(summary)].join('\n') + '\n';
}

/** The documented, stable JSON shape (docs/cli.md): version 1. */
export function formatJson(findings: readonly ManifestFinding[], summary: CheckSummary): string {
  return `${JSON.stringify({ version: 1, findings, summary }, null, 2)}\n`;
}

/** SARIF 2.1.0 for code-scanning tools: one result per finding, located by file and line, with its rule described. */
export function formatSarif(findings: readonly ManifestFinding[]): string {
  const rules = [...new Set(findings.map((f) => f.rule))].sort().map((id) => ({
    id,
    shortDescription: { text: RULE_DESCRIPTIONS[id] },
    help: {
      text: `${RULE_DESCRIPTIONS[id]} See docs/rules.md#${id} in the snapshot-webhook package.`,
      markdown: `${RULE_DESCRIPTIONS[id]} See [docs/rules.md#${id}](docs/rules.md#${id}).`,
    },
  }));
  const results = findings.map((f) => ({
    ruleId: f.rule,
    level: f.severity === 'error' ? 'error' : 'warning',
    message: { text: f.kind === '' ? f.message : `${who(f)}: ${f.message}` },
    locations: [{ physicalLocation: { artifactLocation: { uri: f.file }, region: { startLine: Math.max(1, f.line) } } }],
  }));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{ tool: { driver: { name: 'snapshot-webhook', version: packageVersion(), rules } }, results }],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}
