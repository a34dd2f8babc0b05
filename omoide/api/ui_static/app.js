// omoide memory browser: plain DOM, no build step, and no server but omoide's /v1 API. The key
// lives in sessionStorage (this tab only) and travels in the Authorization header, never in a URL.
import { drawGraph } from "./graph.js";

const KEY = "omoide.key";
const TENANT = "omoide.tenant";
const main = document.getElementById("main");
const saved = JSON.parse(sessionStorage.getItem(TENANT) || "null") || {};
const state = {
  tenant: { user_id: saved.user_id || "default", scope_id: saved.scope_id || "default" },
  bound: Boolean(saved.bound), // the key is bound to a tenant: no "every tenant" views
};

// DOM helpers: text always goes in as text nodes, so a stored memory can never inject markup.
function build(el, attrs, kids) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  const flat = kids.flat(9).filter((k) => k != null && k !== false);
  el.append(...flat.map((k) => (k instanceof Node ? k : String(k))));
  return el;
}
const h = (tag, attrs, ...kids) => build(document.createElement(tag), attrs, kids);
const when = (t) => (t ? new Date(t).toISOString().replace("T", " ").slice(0, 19) : "—");
const link = (href, text, attrs) => h("a", { href, ...attrs }, text);
const enc = encodeURIComponent;
const badge = (text, kind) => h("span", { class: `badge b-${kind || text}` }, text);
const muted = (text) => h("p", { class: "muted" }, text);
function table(head, rows, attrs) {
  if (!rows.length) return h("p", { class: "muted empty" }, "Nothing here yet.");
  const top = h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c))));
  return h("table", attrs, top, h("tbody", {}, rows));
}
const row = (attrs, ...cells) => h("tr", attrs, cells.map((c) => h("td", {}, c)));

function toast(text) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.className = "show";
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.className = ""), 4000); // cosmetic: the text stays readable
}

// dialogs: the key prompt and the delete confirmation ----------------------------------------
let asking = null; // one prompt at a time, however many calls were refused
function askKey(message) {
  if (asking) return asking;
  const dialog = document.getElementById("key-dialog");
  const input = document.getElementById("key-input");
  const error = document.getElementById("key-error");
  error.hidden = !message;
  error.textContent = message || "";
  input.value = "";
  asking = new Promise((resolve) => {
    const done = () => {
      const ok = dialog.returnValue === "ok" && input.value.trim() !== "";
      if (ok) sessionStorage.setItem(KEY, input.value.trim());
      asking = null;
      resolve(ok);
    };
    dialog.addEventListener("close", done, { once: true });
  });
  dialog.returnValue = "";
  dialog.showModal();
  return asking;
}
document.getElementById("key-forget").addEventListener("click", () => {
  sessionStorage.removeItem(KEY);
  document.getElementById("key-dialog").close("forget");
  toast("Key forgotten for this tab.");
});
document.getElementById("key-button").addEventListener("click", async () => {
  if (await askKey()) route();
});

function confirmDelete(text) {
  const dialog = document.getElementById("confirm-dialog");
  document.getElementById("confirm-text").textContent = text;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

// the API ------------------------------------------------------------------------------------
class ApiError extends Error {
  constructor(status, body) {
    super((body.error && body.error.message) || body.detail || `HTTP ${status}`);
    this.status = status;
  }
}

// The current tenant goes in the query string (GET, DELETE) or the body (POST), unless
// `tenant: false`; a 401 asks for a key and tries again with it.
async function api(method, path, { query, body, tenant = true } = {}) {
  const url = new URL(path, location.origin);
  const params = { ...(tenant && !body ? state.tenant : {}), ...query };
  for (const [k, v] of Object.entries(params)) {
    if (v == null || v === "" || (typeof v === "object" && !Object.keys(v).length)) continue;
    url.searchParams.set(k, typeof v === "object" ? JSON.stringify(v) : v);
  }
  const headers = { Accept: "application/json" };
  const key = sessionStorage.getItem(KEY);
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body) headers["Content-Type"] = "application/json";
  const payload = body && JSON.stringify(tenant ? { ...state.tenant, ...body } : body);
  const res = await fetch(url, { method, headers, body: payload });
  if (res.status === 401) {
    if (await askKey(key ? "That key was not accepted." : "")) {
      return api(method, path, { query, body, tenant });
    }
    throw new ApiError(401, { detail: "An API key is needed." });
  }
  const data = res.status === 204 ? null : await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, data || {});
  return data;
}

// routing: #/view/arg?params; each view resolves to the nodes of the page -----------------------
function parseHash() {
  const [path, qs] = (location.hash.slice(2) || "tenants").split("?");
  const [view, ...rest] = path.split("/");
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : "";
  return { view, arg, params: new URLSearchParams(qs || ""), after: [] };
}
let renders = 0;
const NAV = { session: "sessions", memory: "memories" };
async function route() {
  const where = parseHash();
  const mine = ++renders;
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("active", a.dataset.view === (NAV[where.view] || where.view));
  }
  main.setAttribute("aria-busy", "true");
  let nodes;
  try {
    nodes = await (VIEWS[where.view] || VIEWS.tenants)(where);
  } catch (err) {
    nodes = [h("h1", {}, "Something went wrong"), h("p", { class: "error" }, err.message)];
  }
  if (mine !== renders) return; // a newer navigation won
  main.replaceChildren(...[nodes].flat(9).filter(Boolean));
  where.after.forEach((f) => f()); // work that needs the page in the document
  document.getElementById("tenant").textContent = `${state.tenant.user_id} / ${state.tenant.scope_id}`;
  main.removeAttribute("aria-busy");
}
const go = (hash) => (location.hash === hash ? route() : (location.hash = hash));
function setTenant(user_id, scope_id, bound = state.bound) {
  state.tenant = { user_id: user_id || "default", scope_id: scope_id || "default" };
  state.bound = bound;
  sessionStorage.setItem(TENANT, JSON.stringify({ ...state.tenant, bound }));
}
function pager(base, page) {
  if (page.total <= page.limit) return null;
  const at = (offset) => `${base}${base.includes("?") ? "&" : "?"}offset=${offset}`;
  const end = Math.min(page.total, page.offset + page.limit);
  return h("p", { class: "pager" },
    page.offset > 0 ? link(at(Math.max(0, page.offset - page.limit)), "← newer") : null,
    ` ${page.offset + 1}–${end} of ${page.total} `,
    end < page.total ? link(at(end), "older →") : null);
}

// tenants, sessions, episodes ------------------------------------------------------------------
async function tenantsView() {
  const known = await api("GET", "/v1/tenants", { tenant: false });
  const current = (t) => t.user_id === state.tenant.user_id && t.scope_id === state.tenant.scope_id;
  const first = known.items.find(current) || (known.bound && known.items[0]) || state.tenant;
  setTenant(first.user_id, first.scope_id, known.bound); // a bound key starts in its tenant
  const user = h("input", { name: "user_id", value: state.tenant.user_id, required: true });
  const scope = h("input", { name: "scope_id", value: state.tenant.scope_id, required: true });
  const open = (u, sc) => { setTenant(u, sc); go("#/sessions"); };
  const pick = (t) => h("button", {
    class: "link tenant-pick", "data-tenant": `${t.user_id}/${t.scope_id}`, onclick: () => open(t.user_id, t.scope_id),
  }, t.user_id);
  const submit = (e) => { e.preventDefault(); open(user.value.trim(), scope.value.trim()); };
  return [h("h1", {}, "Tenants"),
    muted(known.bound ? "Your key is bound to these tenants."
      : "Tenants holding memories or entities. Another one can be typed in below."),
    table(["user_id", "scope_id"], known.items.map((t) => row({}, pick(t), t.scope_id)), { id: "tenants" }),
    h("form", { class: "inline", id: "tenant-form", onsubmit: submit },
      h("label", {}, "user_id ", user), h("label", {}, "scope_id ", scope), h("button", {}, "Open"))];
}

async function sessionsView({ params }) {
  const page = await api("GET", "/v1/sessions", { query: { limit: 50, offset: params.get("offset") } });
  const rows = page.items.map((x) => row({},
    link(`#/session/${enc(x.id)}`, x.id, { class: "session-link" }), x.name || "", x.project || "",
    when(x.created_at), when(x.updated_at)));
  return [h("h1", {}, "Sessions ", h("small", {}, `(${page.total})`)),
    table(["id", "name", "project", "created", "updated"], rows, { id: "sessions" }),
    pager("#/sessions", page)];
}

function episodeCard(ep, focus) {
  return h("article", { class: `episode${ep.id === focus ? " focus" : ""}`, id: `ep-${ep.id}` },
    h("header", {}, h("code", {}, ep.id), " ", when(ep.created_at), ` · read ${ep.access_count}×`,
      ep.consolidated_at ? badge("consolidated") : null),
    ep.messages.map((m) => h("p", { class: "msg" }, h("b", {}, m.role), " ", m.content)));
}

async function sessionView({ arg, params, after }) {
  const path = `/v1/sessions/${enc(arg)}`;
  const filters = { session_id: arg, include_invalid: true };
  const [session, episodes, memories] = await Promise.all([
    api("GET", path),
    api("GET", `${path}/episodes`, { query: { limit: 200 } }),
    api("GET", "/v1/memories", { query: { limit: 200, filters } }),
  ]);
  const focus = params.get("episode");
  if (focus) after.push(() => document.getElementById(`ep-${focus}`)?.scrollIntoView({ block: "center" }));
  const remove = async () => {
    if (!(await confirmDelete(`Delete session “${arg}” with its episodes and every memory from it?`))) return;
    const { deleted } = await api("DELETE", path);
    toast(`Session deleted with ${deleted} ${deleted === 1 ? "memory" : "memories"}.`);
    go("#/sessions");
  };
  const cards = episodes.items.map((ep) => episodeCard(ep, focus));
  return [h("h1", {}, "Session ", h("code", {}, session.id)),
    h("p", { class: "meta" }, session.name ? `${session.name} · ` : "",
      session.project ? `project ${session.project} · ` : "",
      `created ${when(session.created_at)} · updated ${when(session.updated_at)} · `,
      link(`#/summaries/${enc(arg)}`, "summaries"), " ",
      h("button", { class: "danger small", id: "delete-session", onclick: remove }, "Delete session")),
    h("div", { class: "columns" },
      h("section", { id: "episodes" }, h("h2", {}, `Episodes (${episodes.total})`),
        cards.length ? cards : muted("No episodes.")),
      h("section", { id: "session-memories" }, h("h2", {}, `Memories (${memories.total})`),
        memoryTable(memories.items)))];
}

// memories: a list, and one with its history, validity and provenance ---------------------------
function validity(m) {
  if (!m.invalid_at) return h("span", {}, `since ${when(m.valid_from)}`);
  return h("span", { class: "invalid" }, `${when(m.valid_from)} → ${when(m.invalid_at)}`);
}
const sessionLink = (id) => (id ? link(`#/session/${enc(id)}`, id) : "—");
function memoryTable(items) {
  const rows = items.map((m) => row({ class: m.invalid_at ? "gone" : null, "data-id": m.id },
    link(`#/memory/${m.id}`, m.text, { class: "memory-link" }), badge(m.type), validity(m),
    sessionLink(m.session_id)));
  return table(["memory", "type", "valid", "session"], rows, { class: "memories" });
}

async function memoriesView({ params }) {
  const type = params.get("type") || "";
  const invalid = params.get("invalid") === "1";
  const filters = { ...(type ? { types: [type] } : {}), ...(invalid ? { include_invalid: true } : {}) };
  const query = { limit: 50, offset: params.get("offset"), filters };
  const page = await api("GET", "/v1/memories", { query });
  const types = ["", "raw", "semantic", "user_profile", "episodic", "summary", "chunk"];
  const select = h("select", { name: "type" },
    types.map((t) => h("option", { value: t, selected: t === type }, t || "any type")));
  const check = h("input", { type: "checkbox", name: "invalid", checked: invalid });
  const here = (t, i) => `#/memories?type=${t}&invalid=${i ? 1 : 0}`;
  const apply = (e) => { e.preventDefault(); go(here(select.value, check.checked)); };
  return [h("h1", {}, "Memories ", h("small", {}, `(${page.total})`)),
    h("form", { class: "inline", onsubmit: apply },
      select, h("label", {}, check, " include no longer valid"), h("button", {}, "Filter")),
    memoryTable(page.items), pager(here(type, invalid), page)];
}

async function memoryView({ arg }) {
  const [m, history] = await Promise.all([
    api("GET", `/v1/memories/${enc(arg)}`), api("GET", `/v1/memories/${enc(arg)}/history`)]);
  const field = (name, ...value) => [h("dt", {}, name), h("dd", {}, ...value)];
  const episode = (id) => (m.session_id
    ? link(`#/session/${enc(m.session_id)}?episode=${id}`, id, { class: "episode-link" }) : h("code", {}, id));
  const sources = m.source_episodes.flatMap((id) => [episode(id), " "]);
  const remove = async () => {
    if (!(await confirmDelete(`Delete this memory? “${m.text.slice(0, 80)}”`))) return;
    await api("DELETE", `/v1/memories/${enc(m.id)}`);
    toast("Memory deleted.");
    go(m.session_id ? `#/session/${enc(m.session_id)}` : "#/memories");
  };
  const rows = history.map((e) => row({}, badge(e.event, e.event.toLowerCase()), e.old_text ?? "",
    e.new_text ?? "", e.actor, when(e.created_at)));
  return [h("h1", {}, "Memory ", badge(m.type)), h("blockquote", { id: "memory-text" }, m.text),
    h("dl", { class: "fields", id: "memory-fields" },
      field("id", h("code", {}, m.id)),
      field("valid", validity(m), m.invalid_at ? " (no longer valid)" : " (valid now)"),
      field("supersedes", m.supersedes ? link(`#/memory/${m.supersedes}`, m.supersedes) : "—"),
      field("session", sessionLink(m.session_id)),
      field("source episodes", sources.length ? sources : "—"),
      field("metadata", h("code", {}, JSON.stringify(m.metadata))),
      field("embedded", m.embedded ? "yes" : "not yet"),
      field("read", `${m.access_count}× · last ${when(m.last_accessed_at)}`),
      field("created", when(m.created_at)), field("updated", when(m.updated_at))),
    h("p", {}, h("button", { class: "danger", id: "delete-memory", onclick: remove }, "Delete memory")),
    h("h2", {}, "History"),
    table(["event", "old text", "new text", "actor", "when"], rows, { id: "history" })];
}

// search, with each signal's rank and score ------------------------------------------------------
function scoreBar(value) {
  const fill = h("span");
  fill.style.width = `${Math.round(value * 80)}px`; // CSSOM, allowed by the page's CSP
  return h("span", { class: "bar" }, fill, value.toFixed(3));
}

async function searchView({ params }) {
  const q = params.get("q") || "";
  const recipe = params.get("recipe") || ""; // "": the server's default, as every other door
  const input = h("input", {
    type: "search", name: "q", value: q, placeholder: "what do you want to find?", id: "search-input", required: true,
  });
  const pick = h("select", { name: "recipe" },
    h("option", { value: "", selected: !recipe }, "default recipe"),
    ["hybrid", "hybrid_weighted", "keyword", "vector"].map((r) => h("option", { selected: r === recipe }, r)));
  const submit = (e) => {
    e.preventDefault();
    go(`#/search?q=${enc(input.value)}${pick.value ? `&recipe=${pick.value}` : ""}`);
  };
  const form = h("form", { class: "inline", id: "search-form", onsubmit: submit },
    input, pick, h("button", {}, "Search"));
  if (!q) return [h("h1", {}, "Search"), form];
  const result = await api("POST", "/v1/memories/search", { body: { query: q, recipe: recipe || null, limit: 20 } });
  const names = [...new Set(result.hits.flatMap((x) => Object.keys(x.signals)))].sort();
  const signal = (x, n) => {
    const seen = x.signals[n];
    return h("td", { class: `signal ${n}` }, seen ? `#${seen.rank + 1} · ${seen.score.toFixed(3)}` : "—");
  };
  const rows = result.hits.map((x, i) => h("tr", { class: "hit" },
    h("td", {}, i + 1), h("td", {}, link(`#/memory/${x.memory.id}`, x.memory.text)),
    h("td", { class: "score" }, scoreBar(x.score)), names.map((n) => signal(x, n))));
  return [h("h1", {}, "Search"), form,
    result.degraded ? h("p", { class: "warning" }, "Degraded: ", result.warnings.join("; ")) : null,
    muted(`${result.hits.length} hits · recipe ${result.recipe}`),
    table(["#", "memory", "score", ...names.map((n) => `${n} (rank · score)`)], rows, { id: "results" })];
}

// empty pages say what fills them ------------------------------------------------------------------
// The graph, variables and summaries come from extraction, which needs an LLM: an empty page says
// so, and how to get one (GET /health tells whether an LLM is configured; it needs no key).
const FILLED_BY = {
  graph: ["The knowledge graph is extracted from conversations: people, places, things and how they relate.",
    "Entities can also be added directly: POST /entities (nexusAI's route)."],
  variables: ["Variables are typed facts (name: value) extracted from conversations, when an add names them (mem_variables).",
    "They can also be set directly: POST /update_variables/ or Memory.update_variables()."],
  summaries: ["A session's rolling summary is written after each exchange that is added to it.",
    "A summary can also be stored directly: POST /summaries (nexusAI's route)."],
};
let llmStatus = null;
async function emptyHint(kind) {
  if (llmStatus === null) {
    const res = await fetch("/health", { headers: { Accept: "application/json" } }).catch(() => null);
    llmStatus = res && res.ok ? ((await res.json()).llm || {}).status || "unknown" : "unknown";
  }
  const [what, direct] = FILLED_BY[kind];
  const how = llmStatus === "disabled"
    ? ["No LLM is configured, so nothing is extracted. Set ", h("code", {}, "OMOIDE_LLM_BASE_URL"), " and ",
      h("code", {}, "OMOIDE_LLM_MODEL"), " (any OpenAI-compatible server: llama.cpp's llama-server, Ollama, vLLM, OpenAI; ",
      "the docs' LLM page has recipes) and restart omoide; conversations added from then on fill this page."]
    : ["Nothing has been extracted for this tenant yet: add conversations, and watch the jobs page."];
  return h("div", { class: "empty-hint", id: `empty-${kind}` }, h("p", {}, what), h("p", {}, how), h("p", { class: "muted" }, direct));
}

// the entity graph (drawn by graph.js) -------------------------------------------------------------
async function entityList(arg, params) {
  const q = params.get("q") || "";
  const input = h("input", { type: "search", name: "q", value: q, placeholder: "find an entity", id: "entity-search" });
  const submit = (e) => { e.preventDefault(); go(`#/graph${arg ? `/${arg}` : ""}?q=${enc(input.value)}`); };
  const found = q
    ? (await api("GET", "/v1/graph/search", { query: { query: q, limit: 30 } })).hits.map((x) => x.entity)
    : (await api("GET", "/v1/graph/entities", { query: { limit: 100 } })).items;
  const item = (e) => h("li", {}, link(`#/graph/${e.id}?depth=${params.get("depth") || 1}`, e.name,
    { class: e.id === arg ? "active" : null }), " ", h("small", {}, e.type));
  return h("aside", { id: "entities" }, h("form", { class: "find", onsubmit: submit }, input, h("button", {}, "Find")),
    h("ul", { class: "entity-list" }, found.map(item)), found.length ? null : muted(q ? "No entities." : "No entities yet."));
}

async function graphView({ arg, params }) {
  const side = await entityList(arg, params);
  const none = !side.querySelector(".entity-list li") && !params.get("q");
  if (!arg) return [h("h1", {}, "Graph"), h("div", { class: "graph-layout" }, side,
    none ? await emptyHint("graph") : muted("Pick an entity."))];
  const depth = Math.min(6, Math.max(0, Number(params.get("depth") ?? 1)));
  const query = { depth, max_nodes: 150 };
  const graph = await api("GET", `/v1/graph/entities/${enc(arg)}/neighborhood`, { query });
  const centre = graph.nodes.find((n) => n.depth === 0);
  const shown = h("output", { id: "depth-value" }, depth);
  const slider = h("input", {
    type: "range", min: 0, max: 6, value: depth, id: "depth", "aria-label": "depth",
    oninput: () => (shown.textContent = slider.value),
    onchange: () => go(`#/graph/${arg}?depth=${slider.value}`),
  });
  const stats = `${graph.nodes.length} entities · ${graph.edges.length} relationships`;
  const edgeRows = graph.edges.map((e) => row({}, e.from_name, e.label, e.to_name, e.mention_count));
  return [h("h1", {}, "Graph around ", h("span", { id: "graph-centre" }, centre ? centre.name : arg)),
    h("div", { class: "graph-layout" }, side, h("section", {},
      h("p", { class: "inline" }, h("label", {}, "depth ", slider, " ", shown),
        h("span", { class: "muted", id: "graph-stats" }, stats, graph.truncated ? " · truncated" : "")),
      drawGraph(graph, (id) => go(`#/graph/${id}?depth=${depth}`)),
      muted("Click an entity to centre on it; drag to move it."),
      table(["from", "relationship", "to", "mentions"], edgeRows, { id: "edges" })))];
}

// variables, summaries, jobs -----------------------------------------------------------------------
async function variablesView() {
  const { variables } = await api("GET", "/v1/variables");
  const rows = Object.entries(variables).map(([k, v]) => row({}, h("code", {}, k), String(v), typeof v));
  if (!rows.length) return [h("h1", {}, "Variables"), await emptyHint("variables")];
  return [h("h1", {}, "Variables"), table(["name", "value", "type"], rows, { id: "variables" })];
}

async function summariesView({ arg, params }) {
  const sessions = (await api("GET", "/v1/sessions", { query: { limit: 500 } })).items;
  const history = params.get("history") === "1";
  const pick = h("select", { id: "summary-session", onchange: () => go(`#/summaries/${enc(pick.value)}`) },
    h("option", { value: "" }, "pick a session"),
    sessions.map((x) => h("option", { value: x.id, selected: x.id === arg }, x.id)));
  const toggle = arg && link(`#/summaries/${enc(arg)}?history=${history ? 0 : 1}`,
    history ? "hide superseded versions" : "show superseded versions");
  const top = [h("h1", {}, "Summaries"), h("p", { class: "inline" }, "session ", pick, toggle)];
  if (!arg) return sessions.length ? top : [...top, await emptyHint("summaries")];
  const page = await api("GET", "/v1/summaries", { query: { session_id: arg, include_history: history } });
  const remove = (m) => async () => {
    if (!(await confirmDelete(`Delete this summary? “${m.text.slice(0, 80)}”`))) return;
    await api("DELETE", `/v1/summaries/${enc(m.id)}`);
    toast("Summary deleted.");
    route();
  };
  const card = (m, i) => h("article", { class: `summary${m.invalid_at ? " gone" : ""}` },
    h("header", {}, i === 0 && !m.invalid_at ? badge("rolling") : null, " ", validity(m), " ",
      link(`#/memory/${m.id}`, "details"), " ", h("button", { class: "danger small", onclick: remove(m) }, "Delete")),
    h("p", {}, m.text));
  return [...top, page.items.length ? page.items.map(card) : await emptyHint("summaries")];
}

async function jobsView({ params }) {
  const all = params.get("all") === "1" && !state.bound; // every tenant: full-access keys only
  const only = params.get("state") || "";
  const scope = all ? {} : state.tenant;
  const [stats, list] = await Promise.all([
    api("GET", "/v1/jobs/stats", { tenant: false, query: scope }),
    api("GET", "/v1/jobs", { tenant: false, query: { ...scope, state: only, limit: 200 } })]);
  const here = (st, a) => `#/jobs?state=${st}&all=${a ? 1 : 0}`;
  const retry = (job) => async () => {
    const done = await api("POST", `/v1/jobs/${job.id}/retry`, { tenant: false, query: scope });
    toast(`Job ${done.id} is ${done.state} again.`);
    route();
  };
  const rows = list.items.map((j) => h("tr", { "data-job": j.id, "data-state": j.state },
    h("td", {}, j.id), h("td", {}, j.kind), h("td", {}, badge(j.state)), h("td", {}, `${j.attempts}/${j.max_attempts}`),
    h("td", {}, `${j.user_id} / ${j.scope_id}`),
    h("td", { class: "error-text", title: j.last_error || "" }, (j.last_error || "").slice(0, 160)),
    h("td", {}, when(j.updated_at)),
    h("td", {}, j.state === "failed" ? h("button", { class: "small retry", onclick: retry(j) }, "Retry") : null)));
  const stat = ([k, v]) => link(here(k, all), [badge(k), ` ${v}`], { class: `stat${k === only ? " active" : ""}` });
  return [h("h1", {}, "Jobs"),
    h("p", { class: "stats" }, Object.entries(stats).map(stat), link(here("", all), "all states"),
      state.bound ? null : [" · ", link(here(only, !all), all ? "only this tenant" : "every tenant")]),
    table(["id", "kind", "state", "attempts", "tenant", "last error", "updated", ""], rows, { id: "jobs" })];
}

const VIEWS = {
  tenants: tenantsView, sessions: sessionsView, session: sessionView, memories: memoriesView,
  memory: memoryView, search: searchView, graph: graphView, variables: variablesView,
  summaries: summariesView, jobs: jobsView,
};
window.addEventListener("hashchange", route);
route();
