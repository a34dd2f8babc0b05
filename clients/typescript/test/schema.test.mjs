// The checked-in src/schema.ts is what the current server's /openapi.json generates: the
// client cannot drift from the server. After changing the HTTP API: `npm run generate`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { SCHEMA_FILE, schemaFrom } from "../scripts/schema.mjs";
import { startServer } from "./server.mjs";

test("src/schema.ts matches the server's /openapi.json", async () => {
  const server = await startServer();
  try {
    const generated = await schemaFrom(server.url);
    const checkedIn = readFileSync(SCHEMA_FILE, "utf8");
    assert.ok(generated === checkedIn, "src/schema.ts is stale: run `npm run generate` in clients/typescript");
  } finally {
    await server.stop();
  }
});
