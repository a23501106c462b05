/**
 * The anchor for the bridge: a process in the same position that only copies bytes.
 *
 *   node byte-relay.js <command> [args...]
 */
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error("usage: byte-relay <command> [args...]");
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on("error", () => {});
child.once("exit", (code) => process.exit(code ?? 0));
