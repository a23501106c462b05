import { spawn } from "node:child_process";
import { probe } from "./paths.js";

/** Runs a probe script in a child process with --expose-gc and parses the JSON it prints. */
export function runProbe<T>(name: string, args: readonly string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", probe(name), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("exit", (code) => {
      if (code !== 0) reject(new Error(`probe ${name} ${args.join(" ")} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout) as T);
    });
  });
}
