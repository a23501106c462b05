import assert from "node:assert/strict";
import { REDACTED, redactSecrets } from "../../src/bridge/redact.js";
import { describeProblem, framingErrorResponse, jsonLineSplitter, type FramingProblem } from "../../src/wire/index.js";

/** What the trace would hold for `value`, parsed back. */
const redacted = (value: unknown): unknown => JSON.parse(JSON.stringify(value, redactSecrets)) as unknown;

/** Names that hold a credential: as a key, a `{name, value}` header, a `[name, value]` header pair, a flag, a header argument. */
const SECRET_NAMES = [
  "token", "accessToken", "refresh-token", "secret", "client_secret", "password", "Pass_Word", "passwd", "pwd",
  "passphrase", "jwt", "id_jwt", "bearer", "authentication", "authorization", "Proxy-Authorization", "cookie",
  "Set-Cookie", "credentials", "api_key", "apiKey", "X-Api-Key", "openai_key", "OPENAI_API_KEY", "signing_key",
  "sessionKey", "privateKey", "x-auth", "X-Auth-Token", "X-Authentication", "pat", "github_pat", "key", "auth",
];
/** Names that do not: kept everywhere. */
const PLAIN_NAMES = ["name", "keyboard", "mode", "port", "tokens", "inputTokens", "authMethods", "patch", "path", "monkey", "Accept"];

describe("trace redaction: one name rule, by table", () => {
  for (const name of SECRET_NAMES) {
    it(`'${name}' is credential-named everywhere`, () => {
      assert.deepEqual(redacted({ [name]: "s3cr3t" }), { [name]: REDACTED }, "as a key");
      assert.deepEqual(redacted({ headers: [{ name, value: "s3cr3t" }] }), { headers: [{ name, value: REDACTED }] }, "as a header");
      assert.deepEqual(redacted({ headers: [[name, "s3cr3t"]] }), { headers: [[name, REDACTED]] }, "as a header pair");
      assert.deepEqual(redacted({ args: [`--${name}`, "s3cr3t", `--${name}=s3cr3t`] }), {
        args: [`--${name}`, REDACTED, `--${name}=${REDACTED}`],
      }, "as a flag");
      assert.deepEqual(redacted({ args: [`${name}: s3cr3t`] }), { args: [`${name}: ${REDACTED}`] }, "as a header argument");
    });
  }

  it("plain names are kept as keys, headers, header pairs and flags", () => {
    for (const name of PLAIN_NAMES) {
      const value = { [name]: "v", headers: [{ name, value: "v" }, [name, "v"]], args: [`--${name}`, "v", `--${name}=v`] };
      assert.deepEqual(redacted(value), value, name);
    }
  });

  it("`auth` and `key` (alone or as the last word) hide a string only: the auth capability object is kept", () => {
    const value = { auth: { terminal: true }, sessionKey: { id: 1 }, xAuth: 3 };
    assert.deepEqual(redacted(value), value);
  });
});

describe("a malformed line's text is never copied into its answer or the log", () => {
  const problemOf = (line: string): FramingProblem => {
    let found: FramingProblem | undefined;
    const splitter = jsonLineSplitter({ value: () => assert.fail("parsed"), problem: (problem) => (found = problem) }, 1024);
    splitter.push(Buffer.from(`${line}\n`));
    assert.ok(found !== undefined);
    return found;
  };

  for (const line of [
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"token":"SECRET-VALUE-1"',
    '{"token":"SECRET-VALUE-1" "x"}',
    '{"token":"SECRET-VALUE-1"}x',
    "SECRET-VALUE-1",
  ]) {
    it(`${line.slice(0, 40)}…: the answer and the description name the problem and size only`, () => {
      const problem = problemOf(line);
      const described = describeProblem(problem);
      const answer = JSON.stringify(framingErrorResponse(problem));
      assert.match(described, /not valid JSON/);
      assert.match(described, new RegExp(`${Buffer.byteLength(line)} bytes`));
      for (const text of [described, answer]) assert.equal(text.includes("SECRET"), false, text);
    });
  }
});
