// Validates SARIF files against the official SARIF 2.1.0 JSON schema (as shipped in the
// @microsoft/jest-sarif package), with ajv. Usage: node sarif.js FILE...
"use strict";
const fs = require("fs");
const Ajv = require("ajv");
const schema = require("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");

const ajv = new Ajv({ schemaId: "id", allErrors: true, unknownFormats: "ignore" });
ajv.addMetaSchema(require("ajv/lib/refs/json-schema-draft-04.json"));
const validate = ajv.compile(schema);

let failed = 0;
for (const file of process.argv.slice(2)) {
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  if (validate(doc)) {
    const results = doc.runs.reduce((n, r) => n + r.results.length, 0);
    console.log(`ok   SARIF 2.1.0 schema: ${file} (${results} results)`);
  } else {
    failed++;
    console.error(`FAIL SARIF 2.1.0 schema: ${file}`);
    console.error(JSON.stringify(validate.errors, null, 2));
  }
}
process.exit(failed ? 1 : 0);
