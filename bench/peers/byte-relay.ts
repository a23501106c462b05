/**
 * The anchor for the bridge: a process in the same position that only copies bytes.
 *
 *   node byte-relay.js [--own-session] <command> [args...]
 *
 * --own-session starts the agent as the bridge does (`detached`: a session and process group
 * of its own, so that stopping it stops everything it started). With Linux's autogroup
 * scheduling a session is also a scheduling group, which changes wake-up latency on a busy
 * machine: this variant measures that cost on its own.
 */
import { spawn } from "node:child_process";

const argv = process.argv.slice(2);
const ownSession = argv[0] === "--own-session";
const [command, ...args] = ownSession ? argv.slice(1) : argv;
if (command === undefined) throw new Error("usage: byte-relay [--own-session] <command> [args...]");
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], detached: ownSession });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on("error", () => {});
child.once("exit", (code) => process.exit(code ?? 0));
