import assert from "node:assert/strict";
import { installCommand, missingPackages, missingPackagesMessage, OTEL_PACKAGES } from "../../src/bridge/optional-packages.js";

const missingFrom = (absent: string[]) => (name: string) => {
  if (absent.includes(name)) throw new Error(`Cannot find package '${name}'`);
  return `file:///x/${name}`;
};

describe("optional packages: which are missing, and the npm command that installs them where this copy finds them", () => {
  it("a global install gets `npm i -g` in its own prefix; a project's copy, the project; a clone, itself", () => {
    assert.equal(installCommand(["redis"], "/usr/local/lib/node_modules/acp-cancel/"), "npm i -g --prefix /usr/local redis");
    assert.equal(installCommand(["redis"], "/home/u/.local/lib/node_modules/acp-cancel"), "npm i -g --prefix /home/u/.local redis");
    assert.equal(installCommand(["redis"], "/lib/node_modules/acp-cancel"), "npm i -g --prefix / redis");
    assert.equal(installCommand(["pg", "redis"], "/srv/app/node_modules/acp-cancel/"), "npm i --prefix /srv/app pg redis");
    assert.equal(installCommand(["redis"], "/work/acp-cancel/"), "npm i --prefix /work/acp-cancel redis");
    assert.equal(installCommand(["redis"], "/opt/my tools/lib/node_modules/acp-cancel/"), "npm i -g --prefix '/opt/my tools' redis");
  });

  it("missing packages are those an import from here would not find", () => {
    assert.deepEqual(missingPackages(["redis", "no-such-package-acp-cancel-test"]), ["no-such-package-acp-cancel-test"]);
    assert.deepEqual(missingPackages([...OTEL_PACKAGES]), []);
  });

  it("the message names every package the feature needs, marks the missing ones, and installs only those", () => {
    assert.equal(missingPackagesMessage(["redis"], missingFrom([])), undefined);
    const message = missingPackagesMessage(OTEL_PACKAGES, missingFrom(["@opentelemetry/resources", "@opentelemetry/api"])) ?? "";
    const listed = "@opentelemetry/api (missing), @opentelemetry/sdk-trace-node, @opentelemetry/exporter-trace-otlp-http, " +
      "@opentelemetry/resources (missing)";
    assert.ok(message.startsWith(`needs the optional packages ${listed}; install with: npm i `), message);
    assert.ok(message.endsWith(" @opentelemetry/api @opentelemetry/resources"), message);
  });
});
