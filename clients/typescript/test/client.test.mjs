// Every Client method against a real `omoide serve` (test/server.mjs), the typed errors, the
// bearer key, and the retries on 429/503.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import {
  BackendError,
  Client,
  Conflict,
  FeatureDisabled,
  Forbidden,
  InvalidInput,
  NotFound,
  OmoideError,
  Unauthorized,
} from "../dist/index.js";
import { startServer } from "./server.mjs";

const KEY = "ts-admin-key";
const ALICE_KEY = "ts-alice-key";
let server;

before(async () => {
  server = await startServer({
    OMOIDE_API_KEY: KEY,
    OMOIDE_TENANT_KEYS: JSON.stringify({ [ALICE_KEY]: { user_id: "alice" } }),
  });
});
after(async () => {
  await server?.stop();
});

describe("every method against a live server", () => {
  test("memories: add, search, get, getAll, update, history, context, delete, deleteAll", async () => {
    const memory = new Client({ baseUrl: server.url, apiKey: KEY });
    const [tea] = await memory.add("I like jasmine tea", { user_id: "mei", metadata: { src: "ts" } });
    assert.equal(tea.text, "I like jasmine tea");
    assert.equal(tea.user_id, "mei");
    const turns = [
      { role: "user", content: "I moved to Lisbon" },
      { role: "assistant", content: "Nice!" },
    ];
    const added = await memory.add(turns, { user_id: "mei", session_id: "team/chat-1" });
    assert.deepEqual(added.map((m) => m.text), ["I moved to Lisbon", "Nice!"]);

    const found = await memory.search("jasmine tea", { user_id: "mei", limit: 2 });
    assert.equal(found.hits[0].memory.id, tea.id);
    assert.equal((await memory.get(tea.id, { user_id: "mei" })).metadata.src, "ts");
    const page = await memory.getAll({ user_id: "mei", filters: { session_id: "team/chat-1" } });
    assert.equal(page.total, 2);
    assert.equal((await memory.getAll({ user_id: "mei", limit: 1 })).items.length, 1);

    const changed = await memory.update(tea.id, "I like green tea", null, { user_id: "mei" });
    assert.equal(changed.text, "I like green tea");
    const events = (await memory.history(tea.id, { user_id: "mei" })).map((h) => h.event);
    assert.deepEqual(events, ["ADD", "UPDATE"]);
    const context = await memory.context("which tea?", { user_id: "mei", token_budget: 500 });
    assert.match(context.text, /green tea/);

    await memory.delete(tea.id, { user_id: "mei" });
    await assert.rejects(memory.get(tea.id, { user_id: "mei" }), NotFound);
    assert.equal(await memory.deleteAll({ user_id: "mei" }), 2);
    assert.equal((await memory.getAll({ user_id: "mei" })).total, 0);
  });

  test("sessions and episodes", async () => {
    const memory = new Client({ baseUrl: server.url, apiKey: KEY });
    const created = await memory.createSession("s/1", { user_id: "bo", name: "first", metadata: { k: 1 } });
    assert.equal(created.id, "s/1");
    assert.equal((await memory.getSession("s/1", { user_id: "bo" })).name, "first");
    const renamed = await memory.updateSession("s/1", { user_id: "bo", name: "renamed" });
    assert.equal(renamed.name, "renamed");
    await memory.add([{ role: "user", content: "hello" }], { user_id: "bo", session_id: "s/1" });
    const sessions = await memory.listSessions({ user_id: "bo" });
    assert.equal(sessions.total, 1);
    const episodes = await memory.listEpisodes("s/1", { user_id: "bo" });
    assert.equal(episodes.total, 1);
    assert.equal(episodes.items[0].messages[0].content, "hello");
    assert.equal(await memory.deleteSession("s/1", { user_id: "bo" }) >= 1, true);
    await assert.rejects(memory.getSession("s/1", { user_id: "bo" }), NotFound);
  });

  test("jobs and health", async () => {
    const memory = new Client({ baseUrl: server.url, apiKey: KEY });
    await memory.add("queued nothing", { user_id: "jo" });
    assert.ok(Array.isArray(await memory.listJobs({ user_id: "jo" })));
    const counts = await memory.jobCounts();
    assert.equal(typeof counts, "object");
    await assert.rejects(memory.retryJob(424242), NotFound);
    assert.equal((await memory.health()).status, "healthy");
  });
});

describe("errors", () => {
  test("omoide's error shape becomes typed errors", async () => {
    const memory = new Client({ baseUrl: server.url, apiKey: KEY });
    const missing = await memory.get("no-such-id").catch((e) => e);
    assert.ok(missing instanceof NotFound && missing instanceof OmoideError);
    assert.equal(missing.status, 404);
    assert.equal(missing.code, "not_found");
    assert.ok(missing.requestId);
    await memory.createSession("dup");
    await assert.rejects(memory.createSession("dup"), Conflict);
    await assert.rejects(memory.add("   "), (e) => e instanceof InvalidInput && /empty/.test(e.message));
    await assert.rejects(memory.getAll({ limit: 0 }), InvalidInput);
    await assert.rejects(memory.add("I live in Porto", { infer: true }), FeatureDisabled);
  });

  test("bearer keys", async () => {
    await assert.rejects(new Client({ baseUrl: server.url }).getAll(), Unauthorized);
    await assert.rejects(new Client({ baseUrl: server.url, apiKey: "wrong" }).search("x"), Unauthorized);
    const alice = new Client({ baseUrl: server.url, apiKey: ALICE_KEY });
    const [note] = await alice.add("alice's note");
    assert.equal(note.user_id, "alice");
    await assert.rejects(alice.getAll({ user_id: "bob" }), Forbidden);
  });

  test("an unreachable server is a retryable BackendError", async () => {
    const down = new Client({ baseUrl: "http://127.0.0.1:9", timeoutMs: 2000 });
    const error = await down.getAll().catch((e) => e);
    assert.ok(error instanceof BackendError && error.retryable);
    assert.match(error.message, /cannot reach omoide/);
  });
});

// A loopback stub that answers `statuses` in turn, then 200 (omoide itself cannot be made to
// answer 429/503 on demand).
async function flaky(statuses, headers = {}) {
  const seen = [];
  const stub = createServer((request, response) => {
    seen.push(request.url);
    const status = statuses.shift() ?? 200;
    const body = status === 200 ? { items: [], total: 0 } : { error: { code: "busy", message: "slow down" } };
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  });
  await new Promise((r) => stub.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${stub.address().port}`, seen, close: () => stub.close() };
}

describe("retries", () => {
  test("429 and 503 are retried with doubling waits, or the server's Retry-After", async () => {
    const waits = [];
    const sleep = async (ms) => void waits.push(ms);
    const stub = await flaky([429, 503, 503]);
    try {
      const page = await new Client({ baseUrl: stub.url, backoffMs: 20, sleep }).getAll();
      assert.equal(page.total, 0);
      assert.equal(stub.seen.length, 4);
      assert.deepEqual(waits, [20, 40, 80]);
    } finally {
      stub.close();
    }
    waits.length = 0;
    const told = await flaky([429], { "retry-after": "2" });
    try {
      await new Client({ baseUrl: told.url, backoffMs: 20, sleep }).getAll();
      assert.deepEqual(waits, [2000]);
    } finally {
      told.close();
    }
  });

  test("after the last retry the error is thrown; other errors are not retried", async () => {
    const busy = await flaky([503, 503, 503]);
    try {
      const client = new Client({ baseUrl: busy.url, retries: 2, sleep: async () => {} });
      const error = await client.getAll().catch((e) => e);
      assert.ok(error instanceof BackendError && error.retryable && error.status === 503);
      assert.equal(busy.seen.length, 3);
    } finally {
      busy.close();
    }
    const bad = await flaky([400]);
    try {
      await assert.rejects(new Client({ baseUrl: bad.url, sleep: async () => {} }).getAll(), InvalidInput);
      assert.equal(bad.seen.length, 1);
    } finally {
      bad.close();
    }
  });
});

describe("examples/quickstart.ts (docs/integrations/typescript.md)", () => {
  test("runs against the live server as a user would run it", async () => {
    const { execFile } = await import("node:child_process");
    const script = new URL("../dist-examples/quickstart.js", import.meta.url).pathname;
    const env = { ...process.env, OMOIDE_URL: server.url, OMOIDE_API_KEY: KEY };
    const stdout = await new Promise((done, fail) =>
      execFile(process.execPath, [script], { env }, (error, out, err) => (error ? fail(new Error(err)) : done(out))),
    );
    assert.match(stdout, /^recalled: Mei loves jasmine tea$/m);
    assert.match(stdout, /context:\n[\s\S]*Lisbon/);
    assert.match(stdout, /^forgotten: /m);
  });
});
