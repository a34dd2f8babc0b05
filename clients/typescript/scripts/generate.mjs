// Regenerate src/schema.ts from the /openapi.json of a freshly started omoide server.
import { writeFileSync } from "node:fs";
import { startServer } from "../test/server.mjs";
import { SCHEMA_FILE, schemaFrom } from "./schema.mjs";

const server = await startServer();
try {
  writeFileSync(SCHEMA_FILE, await schemaFrom(server.url));
  console.log(`wrote ${SCHEMA_FILE.pathname}`);
} finally {
  await server.stop();
}
