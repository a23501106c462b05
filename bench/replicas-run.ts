/** Runs the replicas scenario alone and prints its tables and goals: node build/bench/replicas-run.js [--quick] */
import { benchOptions } from "./lib/options.js";
import { verdict } from "./report/types.js";
import { replicasScenario } from "./scenarios/replicas.js";

const result = await replicasScenario(benchOptions(process.argv.slice(2)));
for (const table of result.tables) {
  process.stdout.write(`${table.title}\n${table.columns.join(" | ")}\n${table.rows.map((row) => row.join(" | ")).join("\n")}\n`);
}
for (const g of result.goals) process.stdout.write(`${verdict(g)}  ${g.description}: ${g.measured.toFixed(3)} (target ${g.target.toFixed(3)})\n`);
