/**
 * Child-process entry for the in-process engine measurements. Each part runs in a process
 * of its own (run with --expose-gc), in a clean heap and with type feedback of its own,
 * away from the I/O scenarios. Prints one JSON value.
 *
 *   node --expose-gc engine-probe.js per-message|scaling|cascade '{"pairs":50000,"rounds":11,"sizes":[1,10]}'
 */
import { cascadeCost } from "../engine/cascade.js";
import { perMessage } from "../engine/per-message.js";
import { scaling } from "../engine/scaling.js";

const part = process.argv[2];
const { pairs, rounds, sizes } = JSON.parse(process.argv[3] ?? "{}") as {
  pairs: number;
  rounds: number;
  sizes: number[];
};
const output =
  part === "per-message"
    ? perMessage(pairs, rounds)
    : part === "scaling"
      ? scaling(pairs, rounds)
      : part === "cascade"
        ? cascadeCost(sizes, rounds)
        : undefined;
if (output === undefined) throw new Error(`unknown part ${part}`);
process.stdout.write(`${JSON.stringify(output)}\n`);
