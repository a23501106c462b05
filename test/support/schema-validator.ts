import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/**
 * One assertion for the whole suite: every ACP message validates against its protocol
 * version's official schema, the ones shipped in `@agentclientprotocol/sdk`. Each method's
 * definition carries `x-method`, and its name ends in Request, Response or Notification:
 * a request's or notification's params and a response's result are checked against it
 * (a response needs the method of the request it answers), an error against `Error`.
 */

type Message = Record<string, unknown>;
type Kind = "Request" | "Response" | "Notification";

const require = createRequire(import.meta.url);
// ajv-formats is CommonJS: its function is the default export's default under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;
const INTEGER_RANGES: Record<string, [number, number]> = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint8: [0, 2 ** 8 - 1],
  uint16: [0, 2 ** 16 - 1],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, Number.MAX_SAFE_INTEGER],
  uint: [0, Number.MAX_SAFE_INTEGER],
};

class VersionSchema {
  private readonly byMethod = new Map<string, ValidateFunction>();
  readonly error: ValidateFunction;

  constructor(readonly version: number) {
    const main = require.resolve("@agentclientprotocol/sdk");
    const path = main.slice(0, main.lastIndexOf("/dist/") + 1);
    const schema = JSON.parse(readFileSync(`${path}schema/v${version}/schema.json`, "utf8")) as {
      $defs: Record<string, Record<string, unknown>>;
    };
    // The schemas use draft 2020-12 and Rust-style numeric formats; x-* keywords are annotations.
    const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(ajv);
    for (const [format, [min, max]] of Object.entries(INTEGER_RANGES)) {
      ajv.addFormat(format, { type: "number", validate: (n: number) => Number.isInteger(n) && n >= min && n <= max });
    }
    for (const format of ["float", "double"]) ajv.addFormat(format, { type: "number", validate: () => true });
    const id = `urn:acp:schema:v${version}`;
    ajv.addSchema({ ...schema, $id: id });
    for (const [name, definition] of Object.entries(schema.$defs)) {
      const method = definition["x-method"];
      const kind = (["Request", "Response", "Notification"] as const).find((k) => name.endsWith(k));
      if (typeof method !== "string" || kind === undefined) continue;
      this.byMethod.set(`${kind} ${method}`, ajv.getSchema(`${id}#/$defs/${name}`) as ValidateFunction);
    }
    this.error = ajv.getSchema(`${id}#/$defs/Error`) as ValidateFunction;
  }

  /** The validator for a method's message of `kind`; undefined for methods the version does not define. */
  of(kind: Kind, method: string): ValidateFunction | undefined {
    return this.byMethod.get(`${kind} ${method}`);
  }
}

const compiled = new Map<number, VersionSchema>();
/** The schema of a version the SDK ships, compiled once per test run; undefined for any other. */
export function schemaFor(version: number): VersionSchema | undefined {
  if (version !== 1 && version !== 2) return undefined;
  let schema = compiled.get(version);
  if (schema === undefined) {
    schema = new VersionSchema(version);
    compiled.set(version, schema);
  }
  return schema;
}

function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`)
    .join("; ");
}

const isId = (id: unknown) => typeof id === "string" || (typeof id === "number" && Number.isInteger(id));

/**
 * What is wrong with `message` under `version`, or undefined when it is valid. `method` is
 * the method a response answers (undefined: not known, only the envelope is checked).
 */
export function schemaProblem(version: number, message: Message, method?: string): string | undefined {
  const schema = schemaFor(version);
  if (schema === undefined) return undefined;
  if (message.jsonrpc !== "2.0") return 'jsonrpc is not "2.0"';
  if (typeof message.method === "string") {
    const isRequest = "id" in message;
    if (isRequest && !isId(message.id)) return "a request id must be a string or an integer";
    const validate = schema.of(isRequest ? "Request" : "Notification", message.method);
    if (validate === undefined || validate(message.params ?? {})) return undefined;
    return `params: ${describeErrors(validate)}`;
  }
  const hasResult = "result" in message;
  if (hasResult === "error" in message) return "a response needs exactly one of result and error";
  if (!hasResult) return schema.error(message.error) ? undefined : `error: ${describeErrors(schema.error)}`;
  if (!isId(message.id)) return "a result's id must be a string or an integer";
  const validate = method === undefined ? undefined : schema.of("Response", method);
  if (validate === undefined || validate(message.result)) return undefined;
  return `result (${method}): ${describeErrors(validate)}`;
}

/** One direction of a wire, as the tracker sees it: which end wrote the message. */
export type End = "a" | "b";

/**
 * Follows a conversation between two ends (client and agent, in either role): learns the
 * version in force from the `initialize` answer, remembers each request's method so its
 * answer can be checked, and reports the first invalid message.
 */
export class ConformanceTracker {
  private version = 1;
  private readonly methods: Record<End, Map<unknown, string>> = { a: new Map(), b: new Map() };
  /** The first invalid message seen, described. */
  firstProblem: string | undefined;

  constructor(private readonly where: string) {}

  /** A message written by `from`. `check: false` only learns from it (a message we did not produce). */
  see(from: End, message: unknown, check = true): void {
    try {
      this.follow(from, message, check);
    } catch (error) {
      // Never break the wire being watched: a failure of the check is a failure of the test.
      failures.push(`${this.where}: schema check failed: ${String(error)}`);
    }
  }

  private follow(from: End, message: unknown, check: boolean): void {
    if (typeof message !== "object" || message === null || Array.isArray(message)) return;
    const m = message as Message;
    let method: string | undefined;
    if (typeof m.method === "string") {
      if ("id" in m) this.methods[from].set(m.id, m.method);
    } else if ("id" in m) {
      const asker = from === "a" ? "b" : "a";
      // Kept after the answer: a bridge's trace shows the same answer twice (read, then written).
      method = this.methods[asker].get(m.id);
      const version = (m.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (method === "initialize" && typeof version === "number") this.version = version;
    }
    if (!check || this.firstProblem !== undefined) return;
    // An initialize request is written in the version it asks for.
    const asked = m.method === "initialize" ? (m.params as { protocolVersion?: unknown } | undefined)?.protocolVersion : undefined;
    const version = typeof asked === "number" ? asked : this.version;
    const problem = schemaProblem(version, m, method);
    if (problem !== undefined) {
      this.firstProblem = `${this.where}: invalid ACP v${version} message ${JSON.stringify(m).slice(0, 400)}: ${problem}`;
      failures.push(this.firstProblem);
    }
  }
}

/** Invalid messages seen during the current test, in order. */
const failures: string[] = [];
/** Checks to run once a test ends (e.g. reading a bridge's trace file). */
const pendingChecks: (() => void)[] = [];

/** Registers a check that runs after the current test (the bridge harness reads its trace then). */
export function checkAfterTest(check: () => void): void {
  pendingChecks.push(check);
}

/** Runs the pending checks and throws for the first invalid message of the test. */
export function assertConformance(): void {
  for (const check of pendingChecks.splice(0)) check();
  const first = failures[0];
  failures.length = 0;
  if (first !== undefined) throw new Error(first);
}

/**
 * A root hook: every test of every file that uses the wire helpers gets the assertion. The
 * failure is given to the test (the hook's `error`), so it fails that test alone instead of
 * stopping the run the way a failing root hook would.
 */
if (typeof afterEach === "function") {
  afterEach(function (this: Mocha.Context) {
    try {
      assertConformance();
    } catch (error) {
      (this.test as Mocha.Hook & { error(err: unknown): void }).error(error);
    }
  });
}
