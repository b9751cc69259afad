// The shell blocks of one section of a page of docs/, as a reader pastes them: the suites that run a page's
// commands read them from the page, so that the page cannot drift from what is run.
import { readFileSync } from 'node:fs';

/** The ```sh blocks of the section of `page` (docs/NAME.md) that starts with the heading `## <heading>`. */
export function docBlocks(page: string, heading: string): string[] {
  const text = readFileSync(`docs/${page}.md`, 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/${page}.md has no section "## ${heading}"`);
  const rest = text.slice(start + heading.length + 5);
  const section = rest.slice(0, rest.search(/\n## |$/));
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map(([, block = '']) => block);
}
