import { formatValue, type Goal } from "./types.js";

const esc = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("\"", "&quot;");

/**
 * A horizontal bar chart of the ratio goals: one bar per goal, its target as a tick,
 * green when met and red when missed. Plain SVG text, no dependencies.
 */
export function ratioChart(goals: readonly Goal[], subtitle: string): string {
  const rows = goals.filter((g) => g.chart && g.unit === "x");
  const labelWidth = 250;
  const barWidth = 420;
  const rowHeight = 28;
  const top = 58;
  const width = labelWidth + barWidth + 150;
  const height = top + rows.length * rowHeight + 58;
  const finite = rows.flatMap((g) => [g.target, Number.isFinite(g.measured) ? g.measured : 0]);
  const scaleMax = Math.max(1, ...finite) * 1.1;
  const x = (value: number) =>
    Math.round((labelWidth + (Math.max(0, value) / scaleMax) * barWidth) * 10) / 10;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    "<text x=\"16\" y=\"24\" font-size=\"15\" font-weight=\"600\" fill=\"#111\">acp-cancel: headline ratios against their goals</text>",
    `<text x="16" y="42" fill="#555">${esc(subtitle)}</text>`,
  ];
  for (let tick = 0; tick <= scaleMax; tick += scaleMax > 4 ? 1 : 0.5) {
    const tx = x(tick);
    parts.push(
      `<line x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${top + rows.length * rowHeight}" stroke="#e5e5e5"/>`,
      `<text x="${tx}" y="${top + rows.length * rowHeight + 16}" text-anchor="middle" fill="#777">${tick.toFixed(1)}x</text>`,
    );
  }
  rows.forEach((g, i) => {
    const y = top + i * rowHeight;
    const colour = g.pass ? "#2e9e5b" : "#d0453b";
    const measured = Number.isFinite(g.measured) ? g.measured : 0;
    const goalText = `${g.kind === "max" ? "≤" : "≥"} ${formatValue(g.target, g.unit)}`;
    parts.push(
      `<text x="${labelWidth - 10}" y="${y + 17}" text-anchor="end" fill="#222">${esc(g.label)}</text>`,
      `<rect x="${labelWidth}" y="${y + 5}" width="${Math.max(1, Math.round((x(measured) - labelWidth) * 10) / 10)}" height="16" rx="2" fill="${colour}"/>`,
      `<line x1="${x(g.target)}" y1="${y + 1}" x2="${x(g.target)}" y2="${y + 25}" stroke="#111" stroke-width="2"/>`,
      `<text x="${labelWidth + barWidth + 12}" y="${y + 17}" fill="${colour}">${esc(`${formatValue(g.measured, g.unit)} (goal ${goalText})`)}</text>`,
    );
  });
  parts.push(
    `<text x="16" y="${height - 10}" fill="#555">Bar: measured ratio (green: goal met, red: missed). Black tick: the goal. Median over interleaved rounds; see docs/benchmarks.md.</text>`,
    "</svg>",
  );
  return `${parts.join("\n")}\n`;
}
