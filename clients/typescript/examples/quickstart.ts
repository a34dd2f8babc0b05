// Remember and recall with omoide from TypeScript. Start a server (`omoide serve`), then:
//   OMOIDE_URL=http://127.0.0.1:8000 OMOIDE_API_KEY=... node dist-examples/quickstart.js
import { Client, NotFound } from "@omoide/client";

const memory = new Client({
  baseUrl: process.env.OMOIDE_URL ?? "http://127.0.0.1:8000",
  apiKey: process.env.OMOIDE_API_KEY,
});

// Store a conversation turn in a session, and a standalone fact.
await memory.add(
  [
    { role: "user", content: "Hi, I'm Mei. I live in Lisbon." },
    { role: "assistant", content: "Nice to meet you, Mei!" },
  ],
  { user_id: "mei", session_id: "chat-1" },
);
const [tea] = await memory.add("Mei loves jasmine tea", { user_id: "mei" });

// Recall: search hits, or a ready-to-paste context block for a prompt.
const found = await memory.search("what does Mei drink?", { user_id: "mei", limit: 3 });
console.log(`recalled: ${found.hits[0]?.memory.text}`);
const context = await memory.context("what should I know about Mei?", { user_id: "mei" });
console.log(`context:\n${context.text}`);

// Forget it again; errors are typed.
await memory.delete(tea!.id, { user_id: "mei" });
try {
  await memory.get(tea!.id, { user_id: "mei" });
} catch (error) {
  if (error instanceof NotFound) console.log(`forgotten: ${error.message}`);
}
