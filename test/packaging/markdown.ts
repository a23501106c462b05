/**
 * What the docs check reads from a Markdown page: its words, its links, its headings' anchors and
 * its TypeScript blocks. Code blocks are no prose: their words are counted (a reader reads them),
 * but links and headings are only looked for outside them.
 */

export interface CodeBlock {
  /** The info string after the fence, e.g. "ts" or "ts fragment". */
  info: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** What a `<!-- ts-context: … -->` comment on the line before the fence declares (names the excerpt assumes). */
  context: string;
}

export interface Link {
  target: string;
  line: number;
}

/** The page split into code blocks and the prose lines between them (code lines blanked). */
function scan(text: string): { blocks: CodeBlock[]; prose: string[] } {
  const blocks: CodeBlock[] = [];
  const prose: string[] = [];
  let open: { info: string; line: number; lines: string[]; context: string } | undefined;
  const all = text.split("\n");
  all.forEach((line, index) => {
    const fence = /^\s*```(.*)$/.exec(line);
    if (open === undefined && fence !== null) {
      const context = /^<!-- ts-context: (.*) -->$/.exec(all[index - 1] ?? "")?.[1] ?? "";
      open = { info: (fence[1] ?? "").trim(), line: index + 1, lines: [], context };
      prose.push("");
    } else if (open !== undefined && /^\s*```\s*$/.test(line)) {
      blocks.push({ info: open.info, line: open.line, code: open.lines.join("\n"), context: open.context });
      open = undefined;
      prose.push("");
    } else {
      open?.lines.push(line);
      prose.push(open === undefined ? line : "");
    }
  });
  return { blocks, prose };
}

/** Words as `wc -w` counts them, HTML comments left out (a reader never sees them). */
export function wordCount(text: string): number {
  return text.replace(/<!--[\s\S]*?-->/g, " ").split(/\s+/).filter(Boolean).length;
}

export function codeBlocks(text: string): CodeBlock[] {
  return scan(text).blocks;
}

/** Every Markdown link target outside code, inline `code` spans removed first. */
export function links(text: string): Link[] {
  const found: Link[] = [];
  scan(text).prose.forEach((line, index) => {
    const plain = line.replace(/`[^`]*`/g, "");
    for (const match of plain.matchAll(/\]\(([^)\s]+)\)/g)) found.push({ target: match[1] ?? "", line: index + 1 });
  });
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of scan(text).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = (heading[1] ?? "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}
