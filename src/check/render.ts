/** The scorecard for people: a terminal table, and a markdown matrix (one column per agent) for docs/interop.md. */
import { escapeControl } from "../wire/index.js";
import { bridgeChange, type Cell, type Placement, PLACEMENTS, type Scorecard } from "./scorecard.js";

const MARK = { pass: "✔", fail: "✘", skip: "–" } as const;

/** One cell in a few words: `✔ 12 ms`, `✘ none: no answer within 5000 ms`. */
export function cellText(cell: Cell): string {
  const ms = cell.stopToAnswerMs === null ? "" : ` ${Math.round(cell.stopToAnswerMs)} ms`;
  const outcome = cell.verdict === "pass" || cell.outcome === "" ? "" : ` ${cell.outcome}`;
  const note = cell.note === "" ? "" : `: ${cell.note}`;
  return escapeControl(`${MARK[cell.verdict]}${ms}${outcome}${note}`);
}

/** The agent as the scorecard names it: `name version`, else its command; then the ACP version when known. */
export function agentTitle(card: Scorecard): string {
  const { name, agentVersion, command, protocolVersion } = card.agent;
  const title = name === undefined ? command.join(" ") : [name, agentVersion].filter(Boolean).join(" ");
  return escapeControl(protocolVersion === undefined ? title : `${title} (ACP v${protocolVersion})`);
}

function scenariosOf(card: Scorecard): string[] {
  return [...new Set(card.cells.map((cell) => cell.scenario))];
}

function cellOf(card: Scorecard, scenario: string, placement: Placement): Cell | undefined {
  return card.cells.find((cell) => cell.scenario === scenario && cell.placement === placement);
}

/** A table cell's text, a long note cut (the JSON keeps it whole). */
const clip = (text: string) => (text.length > 56 ? `${text.slice(0, 55)}…` : text);

/** The table `acp-cancel check` prints, with what was left running and what was left out below it. */
export function renderTable(card: Scorecard): string {
  const rows = [["scenario", "direct", "bridge", "what the bridge changes"]];
  for (const scenario of scenariosOf(card)) {
    const direct = cellOf(card, scenario, "direct");
    const bridge = cellOf(card, scenario, "bridge");
    const text = (cell: Cell | undefined) => (cell === undefined ? "" : clip(cellText(cell)));
    rows.push([scenario, text(direct), text(bridge), clip(escapeControl(bridgeChange(direct, bridge)))]);
  }
  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  const lines = [
    `acp-cancel check: ${agentTitle(card)}`,
    `model: ${card.modelServer ? "the scripted model server" : "the agent's own"}`,
    "",
    ...rows.map((row) => row.map((text, column) => text.padEnd(widths[column] ?? 0)).join("  ").trimEnd()),
  ];
  const left = card.cells.filter((cell) => cell.leftRunning.length > 0);
  if (left.length > 0) lines.push("", "left running:");
  for (const cell of left) {
    const processes = cell.leftRunning.map((p) => `${p.pid} ${p.command}`).join(", ");
    lines.push(`  ${cell.scenario}, ${cell.placement}: ${escapeControl(processes)}`);
  }
  if (card.leftOut.length > 0) lines.push("", "left out:");
  for (const { scenario, reason } of card.leftOut) lines.push(`  ${scenario}: ${reason}`);
  const failed = card.cells.filter((cell) => cell.verdict === "fail").length;
  lines.push("", failed === 0 ? `every cell that ran holds (${card.cells.length})` : `${failed} of ${card.cells.length} cells fail`);
  return `${lines.join("\n")}\n`;
}

/** `|` and newlines would break a markdown table row. */
const mdCell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** A markdown matrix of several scorecards (each cell `D ✔ 12 ms · B ✔ 3 ms`), then what each left out. */
export function renderMarkdown(cards: readonly Scorecard[]): string {
  const scenarios = [...new Set(cards.flatMap(scenariosOf))];
  const lines = [
    `| scenario | ${cards.map((card) => mdCell(agentTitle(card))).join(" | ")} |`,
    `| --- |${" --- |".repeat(cards.length)}`,
  ];
  for (const scenario of scenarios) {
    const cells = cards.map((card) => {
      const parts = PLACEMENTS.flatMap((placement) => cellOf(card, scenario, placement) ?? []);
      return mdCell(parts.map((cell) => `${cell.placement === "direct" ? "D" : "B"} ${cellText(cell)}`).join(" · ") || "not run");
    });
    lines.push(`| ${mdCell(scenario)} | ${cells.join(" | ")} |`);
  }
  const notes = cards.flatMap((card) => card.leftOut.map(({ scenario, reason }) => `- ${agentTitle(card)}: ${scenario} not run: ${reason}`));
  return `${[...lines, ...(notes.length > 0 ? ["", ...notes] : [])].join("\n")}\n`;
}
