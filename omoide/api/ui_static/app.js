// omoide memory browser. Plain DOM, no build step; it talks only to the /v1 API. The key lives in
// sessionStorage (this tab only) and travels in the Authorization header, never in a URL.
const KEY = "omoide.key";
const TENANT = "omoide.tenant";
const main = document.getElementById("main");
const state = {
  tenant: JSON.parse(sessionStorage.getItem(TENANT) || "null") || { user_id: "default", scope_id: "default" },
  bound: false,
};

// DOM helpers: text always goes in as text nodes, so stored memories can never inject markup.
function build(el, attrs, kids) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...kids.flat(9).filter((k) => k != null && k !== false).map((k) => (k instanceof Node ? k : String(k))));
  return el;
}
const h = (tag, attrs, ...kids) => build(document.createElement(tag), attrs, kids);
const s = (tag, attrs, ...kids) => build(document.createElementNS("http://www.w3.org/2000/svg", tag), attrs, kids);
const when = (t) => (t ? new Date(t).toISOString().replace("T", " ").slice(0, 19) : "—");
const link = (href, text, attrs) => h("a", { href, ...attrs }, text);
const enc = encodeURIComponent;
const table = (head, rows, attrs) =>
  rows.length ? h("table", attrs, h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))), h("tbody", {}, rows))
    : h("p", { class: "muted empty" }, "Nothing here yet.");
const badge = (text, kind) => h("span", { class: `badge b-${kind || text}` }, text);

function toast(text, kind) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.className = `show ${kind || ""}`;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.className = ""), 4000); // cosmetic only
}

// the key prompt -------------------------------------------------------------------------
let asking = null;
function askKey(message) {
  if (asking) return asking;
  const dialog = document.getElementById("key-dialog");
  const error = document.getElementById("key-error");
  error.hidden = !message;
  error.textContent = message || "";
  document.getElementById("key-input").value = "";
  asking = new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      const key = document.getElementById("key-input").value.trim();
      if (dialog.returnValue === "ok" && key) sessionStorage.setItem(KEY, key);
      asking = null;
      resolve(Boolean(key) && dialog.returnValue === "ok");
    }, { once: true });
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
  return new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true }));
}

// the API --------------------------------------------------------------------------------
class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || body.detail || `HTTP ${status}`);
    this.status = status;
  }
}

async function api(method, path, { query, body, tenant = true } = {}) {
  const url = new URL(path, location.origin);
  const params = { ...(tenant && method !== "POST" && method !== "PATCH" ? state.tenant : {}), ...query };
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
    if (await askKey(key ? "That key was not accepted." : "")) return api(method, path, { query, body, tenant });
    throw new ApiError(401, { detail: "An API key is needed." });
  }
  const data = res.status === 204 ? null : await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, data || {});
  return data;
}

// routing: #/view/arg?query; each view returns the nodes of the page ---------------------
function parseHash() {
  const [path, qs] = (location.hash.slice(2) || "tenants").split("?");
  const [view, ...rest] = path.split("/");
  return { view, arg: rest.length ? decodeURIComponent(rest.join("/")) : "", params: new URLSearchParams(qs || "") };
}
let renders = 0;
const after = []; // work that needs the page in the document (scrolling to an episode)
const NAV = { session: "sessions", memory: "memories" };
async function route() {
  const where = parseHash();
  const mine = ++renders;
  document.getElementById("tenant").textContent = `${state.tenant.user_id} / ${state.tenant.scope_id}`;
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.view === (NAV[where.view] || where.view));
  document.body.dataset.view = where.view;
  main.setAttribute("aria-busy", "true");
  let nodes;
  after.length = 0;
  try {
    nodes = await (VIEWS[where.view] || VIEWS.tenants)(where);
  } catch (err) {
    nodes = [h("h1", {}, "Something went wrong"), h("p", { class: "error" }, err.message)];
  }
  if (mine !== renders) return; // a newer navigation won
  main.replaceChildren(...[nodes].flat(9).filter(Boolean));
  after.splice(0).forEach((f) => f());
  document.getElementById("tenant").textContent = `${state.tenant.user_id} / ${state.tenant.scope_id}`;
  main.removeAttribute("aria-busy");
}
const go = (hash) => (location.hash === hash ? route() : (location.hash = hash));
function setTenant(user_id, scope_id) {
  state.tenant = { user_id: user_id || "default", scope_id: scope_id || "default" };
  sessionStorage.setItem(TENANT, JSON.stringify(state.tenant));
}
function pager(base, page) {
  if (page.total <= page.limit) return null;
  const at = (offset) => `${base}${base.includes("?") ? "&" : "?"}offset=${offset}`;
  return h("p", { class: "pager" },
    page.offset > 0 ? link(at(Math.max(0, page.offset - page.limit)), "← newer") : null,
    ` ${page.offset + 1}–${Math.min(page.total, page.offset + page.limit)} of ${page.total} `,
    page.offset + page.limit < page.total ? link(at(page.offset + page.limit), "older →") : null);
}

// tenants, sessions, episodes ------------------------------------------------------------
async function tenantsView() {
  const known = await api("GET", "/v1/tenants", { tenant: false });
  state.bound = known.bound;
  const mine = (t) => t.user_id === state.tenant.user_id && t.scope_id === state.tenant.scope_id;
  if (known.bound && known.items.length && !known.items.some(mine)) setTenant(known.items[0].user_id, known.items[0].scope_id);
  const user = h("input", { name: "user_id", value: state.tenant.user_id, required: true });
  const scope = h("input", { name: "scope_id", value: state.tenant.scope_id, required: true });
  const open = (u, sc) => { setTenant(u, sc); go("#/sessions"); };
  const rows = known.items.map((t) => h("tr", {},
    h("td", {}, h("button", { class: "link tenant-pick", "data-tenant": `${t.user_id}/${t.scope_id}`, onclick: () => open(t.user_id, t.scope_id) }, t.user_id)),
    h("td", {}, t.scope_id)));
  return [h("h1", {}, "Tenants"),
    h("p", { class: "muted" }, known.bound ? "Your key is bound to these tenants." : "Tenants holding memories or entities. Another one can be typed in below."),
    table(["user_id", "scope_id"], rows, { id: "tenants" }),
    h("form", { class: "inline", id: "tenant-form", onsubmit: (e) => { e.preventDefault(); open(user.value.trim(), scope.value.trim()); } },
      h("label", {}, "user_id ", user), h("label", {}, "scope_id ", scope), h("button", {}, "Open"))];
}

async function sessionsView({ params }) {
  const page = await api("GET", "/v1/sessions", { query: { limit: 50, offset: params.get("offset") } });
  const rows = page.items.map((x) => h("tr", {},
    h("td", {}, link(`#/session/${enc(x.id)}`, x.id, { class: "session-link" })), h("td", {}, x.name || ""),
    h("td", {}, x.project || ""), h("td", {}, when(x.created_at)), h("td", {}, when(x.updated_at))));
  return [h("h1", {}, "Sessions ", h("small", {}, `(${page.total})`)),
    table(["id", "name", "project", "created", "updated"], rows, { id: "sessions" }), pager("#/sessions", page)];
}

async function sessionView({ arg, params }) {
  const path = `/v1/sessions/${enc(arg)}`;
  const [session, episodes, memories] = await Promise.all([
    api("GET", path), api("GET", `${path}/episodes`, { query: { limit: 200 } }),
    api("GET", "/v1/memories", { query: { limit: 200, filters: { session_id: arg, include_invalid: true } } })]);
  const focus = params.get("episode");
  const cards = episodes.items.map((ep) => h("article", { class: `episode${ep.id === focus ? " focus" : ""}`, id: `ep-${ep.id}` },
    h("header", {}, h("code", {}, ep.id), " ", when(ep.created_at), ` · read ${ep.access_count}×`, ep.consolidated_at ? badge("consolidated") : null),
    ep.messages.map((m) => h("p", { class: `msg ${m.role}` }, h("b", {}, m.role), " ", m.content))));
  const remove = async () => {
    if (!(await confirmDelete(`Delete session “${arg}” with its episodes and every memory from it?`))) return;
    const { deleted } = await api("DELETE", path);
    toast(`Session deleted with ${deleted} memories.`);
    go("#/sessions");
  };
  if (focus) after.push(() => document.getElementById(`ep-${focus}`)?.scrollIntoView({ block: "center" }));
  return [h("h1", {}, "Session ", h("code", {}, session.id)),
    h("p", { class: "meta" }, session.name ? `${session.name} · ` : "", session.project ? `project ${session.project} · ` : "",
      `created ${when(session.created_at)} · updated ${when(session.updated_at)} · `,
      link(`#/summaries/${enc(arg)}`, "summaries"), " ", h("button", { class: "danger small", id: "delete-session", onclick: remove }, "Delete session")),
    h("div", { class: "columns" },
      h("section", { id: "episodes" }, h("h2", {}, `Episodes (${episodes.total})`), cards.length ? cards : h("p", { class: "muted" }, "No episodes.")),
      h("section", { id: "session-memories" }, h("h2", {}, `Memories (${memories.total})`), memoryTable(memories.items)))];
}

// memories: list, detail with history, validity and provenance ------------------------------
function validity(m) {
  return m.invalid_at ? h("span", { class: "invalid" }, `${when(m.valid_from)} → ${when(m.invalid_at)}`)
    : h("span", {}, `since ${when(m.valid_from)}`);
}
function memoryTable(items) {
  return table(["memory", "type", "valid", "session"], items.map((m) => h("tr", { class: m.invalid_at ? "gone" : null, "data-id": m.id },
    h("td", {}, link(`#/memory/${m.id}`, m.text, { class: "memory-link" })), h("td", {}, badge(m.type)), h("td", {}, validity(m)),
    h("td", {}, m.session_id ? link(`#/session/${enc(m.session_id)}`, m.session_id) : "—"))), { class: "memories" });
}

async function memoriesView({ params }) {
  const type = params.get("type") || "";
  const invalid = params.get("invalid") === "1";
  const filters = { ...(type ? { types: [type] } : {}), ...(invalid ? { include_invalid: true } : {}) };
  const page = await api("GET", "/v1/memories", { query: { limit: 50, offset: params.get("offset"), filters } });
  const types = ["", "raw", "semantic", "user_profile", "episodic", "summary", "chunk"];
  const select = h("select", { name: "type" }, types.map((t) => h("option", { value: t, selected: t === type }, t || "any type")));
  const check = h("input", { type: "checkbox", name: "invalid", checked: invalid });
  const apply = (e) => { e.preventDefault(); go(`#/memories?type=${select.value}&invalid=${check.checked ? 1 : 0}`); };
  return [h("h1", {}, "Memories ", h("small", {}, `(${page.total})`)),
    h("form", { class: "inline", onsubmit: apply }, select, h("label", {}, check, " include no longer valid"), h("button", {}, "Filter")),
    memoryTable(page.items), pager(`#/memories?type=${type}&invalid=${invalid ? 1 : 0}`, page)];
}

async function memoryView({ arg }) {
  const [m, history] = await Promise.all([api("GET", `/v1/memories/${enc(arg)}`), api("GET", `/v1/memories/${enc(arg)}/history`)]);
  const field = (name, ...value) => [h("dt", {}, name), h("dd", {}, ...value)];
  const episodes = m.source_episodes.map((id) => (m.session_id ? link(`#/session/${enc(m.session_id)}?episode=${id}`, id, { class: "episode-link" }) : h("code", {}, id)));
  const remove = async () => {
    if (!(await confirmDelete(`Delete this memory? “${m.text.slice(0, 80)}”`))) return;
    await api("DELETE", `/v1/memories/${enc(m.id)}`);
    toast("Memory deleted.");
    go(m.session_id ? `#/session/${enc(m.session_id)}` : "#/memories");
  };
  const rows = history.map((e) => h("tr", {}, h("td", {}, badge(e.event, e.event.toLowerCase())), h("td", {}, e.old_text ?? ""),
    h("td", {}, e.new_text ?? ""), h("td", {}, e.actor), h("td", {}, when(e.created_at))));
  return [h("h1", {}, "Memory ", badge(m.type)), h("blockquote", { id: "memory-text" }, m.text),
    h("dl", { class: "fields", id: "memory-fields" },
      field("id", h("code", {}, m.id)), field("valid", validity(m), m.invalid_at ? " (no longer valid)" : " (valid now)"),
      field("supersedes", m.supersedes ? link(`#/memory/${m.supersedes}`, m.supersedes) : "—"),
      field("session", m.session_id ? link(`#/session/${enc(m.session_id)}`, m.session_id) : "—"),
      field("source episodes", episodes.length ? episodes.flatMap((e) => [e, " "]) : "—"),
      field("metadata", h("code", {}, JSON.stringify(m.metadata))), field("embedded", m.embedded ? "yes" : "not yet"),
      field("read", `${m.access_count}× · last ${when(m.last_accessed_at)}`), field("created", when(m.created_at)), field("updated", when(m.updated_at))),
    h("p", {}, h("button", { class: "danger", id: "delete-memory", onclick: remove }, "Delete memory")),
    h("h2", {}, "History"), table(["event", "old text", "new text", "actor", "when"], rows, { id: "history" })];
}

// search with per-signal scores --------------------------------------------------------------
async function searchView({ params }) {
  const q = params.get("q") || "";
  const recipe = params.get("recipe") || "hybrid";
  const input = h("input", { type: "search", name: "q", value: q, placeholder: "what do you want to find?", id: "search-input", required: true });
  const pick = h("select", { name: "recipe" }, ["hybrid", "hybrid_weighted", "keyword", "vector"].map((r) => h("option", { selected: r === recipe }, r)));
  const form = h("form", { class: "inline", id: "search-form", onsubmit: (e) => { e.preventDefault(); go(`#/search?q=${enc(input.value)}&recipe=${pick.value}`); } },
    input, pick, h("button", {}, "Search"));
  if (!q) return [h("h1", {}, "Search"), form];
  const result = await api("POST", "/v1/memories/search", { body: { query: q, recipe, limit: 20 } });
  const names = [...new Set(result.hits.flatMap((x) => Object.keys(x.signals)))].sort();
  const bar = (v) => { const fill = h("span"); fill.style.width = `${Math.round(v * 80)}px`; return h("span", { class: "bar" }, fill, v.toFixed(3)); };
  const rows = result.hits.map((x, i) => h("tr", { class: "hit" }, h("td", {}, i + 1), h("td", {}, link(`#/memory/${x.memory.id}`, x.memory.text)),
    h("td", { class: "score" }, bar(x.score)),
    names.map((n) => h("td", { class: `signal ${n}` }, x.signals[n] ? `#${x.signals[n].rank + 1} · ${x.signals[n].score.toFixed(3)}` : "—"))));
  const nodes = [h("h1", {}, "Search"), form,
    result.degraded ? h("p", { class: "warning" }, "Degraded: ", result.warnings.join("; ")) : null,
    h("p", { class: "muted" }, `${result.hits.length} hits · recipe ${result.recipe}`),
    table(["#", "memory", "fused score", ...names.map((n) => `${n} (rank · score)`)], rows, { id: "results" })];
  return nodes;
}

// the entity graph ---------------------------------------------------------------------------
// Radial seed (depth d on ring d), then Fruchterman-Reingold forces with a pull back to the
// ring, so the picture is stable (no randomness) and reads outward from the chosen entity.
function layout(nodes, edges, w, h_) {
  const cx = w / 2, cy = h_ / 2, maxDepth = Math.max(1, ...nodes.map((n) => n.depth));
  const ring = (Math.min(w, h_) / 2 - 50) / maxDepth;
  const byDepth = {};
  nodes.forEach((n) => (byDepth[n.depth] = byDepth[n.depth] || []).push(n));
  for (const [d, group] of Object.entries(byDepth)) {
    group.forEach((n, i) => { const a = (2 * Math.PI * i) / group.length + d * 0.7; n.x = cx + d * ring * Math.cos(a); n.y = cy + d * ring * Math.sin(a); });
  }
  const at = Object.fromEntries(nodes.map((n) => [n.id, n]));
  const k = Math.sqrt((w * h_) / Math.max(nodes.length, 1)) * 0.6;
  for (let step = 0, heat = ring / 2; step < 240; step++, heat *= 0.985) {
    for (const n of nodes) { n.dx = 0; n.dy = 0; }
    for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) {
      const a = nodes[i], b = nodes[j], dx = a.x - b.x || 0.01, dy = a.y - b.y, d2 = dx * dx + dy * dy || 0.01, f = (k * k) / d2;
      a.dx += dx * f; a.dy += dy * f; b.dx -= dx * f; b.dy -= dy * f;
    }
    for (const e of edges) {
      const a = at[e.from_id], b = at[e.to_id];
      if (!a || !b || a === b) continue;
      const dx = a.x - b.x, dy = a.y - b.y, d = Math.hypot(dx, dy) || 0.01, f = d / k;
      a.dx -= dx * f; a.dy -= dy * f; b.dx += dx * f; b.dy += dy * f;
    }
    for (const n of nodes) {
      const rx = n.x - cx, ry = n.y - cy, r = Math.hypot(rx, ry) || 0.01, pull = (n.depth * ring - r) * 0.4;
      n.dx += (rx / r) * pull * k * 0.05; n.dy += (ry / r) * pull * k * 0.05;
      const len = Math.hypot(n.dx, n.dy) || 1, move = Math.min(len, heat);
      if (n.depth === 0) { n.x = cx; n.y = cy; continue; }
      n.x = Math.min(w - 30, Math.max(30, n.x + (n.dx / len) * move));
      n.y = Math.min(h_ - 20, Math.max(20, n.y + (n.dy / len) * move));
    }
  }
}

function drawGraph(graph, depth) {
  const W = 900, H = 560, at = Object.fromEntries(graph.nodes.map((n) => [n.id, n]));
  graph.nodes.forEach((n) => (n.r = Math.min(22, 9 + 2 * Math.log2(1 + n.mention_count))));
  layout(graph.nodes, graph.edges, W, H);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, id: "graph-svg", role: "img", "aria-label": "entity graph" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0L10,5L0,10z" }))));
  const lines = graph.edges.filter((e) => at[e.from_id] && at[e.to_id]).map((e) => {
    const line = s("line", { "marker-end": "url(#arrow)" });
    const label = s("text", { class: "edge-label" }, e.label);
    const place = () => { // the line stops at the target's rim, so its arrowhead shows
      const a = at[e.from_id], b = at[e.to_id], d = Math.hypot(b.x - a.x, b.y - a.y) || 1, cut = (d - b.r - 3) / d;
      line.setAttribute("x1", a.x); line.setAttribute("y1", a.y); line.setAttribute("x2", a.x + (b.x - a.x) * cut);
      line.setAttribute("y2", a.y + (b.y - a.y) * cut); label.setAttribute("x", (a.x + b.x) / 2); label.setAttribute("y", (a.y + b.y) / 2 - 4); };
    place();
    return { e, place, el: s("g", { class: "edge" }, line, label) };
  });
  const nodes = graph.nodes.map((n) => {
    const g = s("g", { class: `node depth-${Math.min(n.depth, 4)}`, "data-name": n.name, "data-id": n.id, transform: `translate(${n.x},${n.y})`, tabindex: 0 },
      s("title", {}, `${n.name} (${n.type}) · ${n.mention_count} mentions · depth ${n.depth}`),
      s("circle", { r: n.r }), s("text", { y: -n.r - 5 }, n.name));
    let drag = null;
    g.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, moved: false }; g.setPointerCapture(ev.pointerId); });
    g.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      const scale = W / svg.getBoundingClientRect().width;
      n.x += (ev.clientX - drag.x) * scale; n.y += (ev.clientY - drag.y) * scale;
      drag = { x: ev.clientX, y: ev.clientY, moved: true };
      g.setAttribute("transform", `translate(${n.x},${n.y})`);
      lines.forEach((l) => (l.e.from_id === n.id || l.e.to_id === n.id) && l.place());
    });
    const centre = () => n.depth > 0 && go(`#/graph/${n.id}?depth=${depth}`);
    g.addEventListener("pointerup", () => { const moved = drag && drag.moved; drag = null; if (!moved) centre(); });
    g.addEventListener("keydown", (ev) => ev.key === "Enter" && centre());
    return g;
  });
  svg.append(s("g", {}, lines.map((l) => l.el)), s("g", {}, nodes));
  return svg;
}

async function graphView({ arg, params }) {
  const q = params.get("q") || "";
  const input = h("input", { type: "search", name: "q", value: q, placeholder: "find an entity", id: "entity-search" });
  const form = h("form", { class: "find", onsubmit: (e) => { e.preventDefault(); go(`#/graph${arg ? `/${arg}` : ""}?q=${enc(input.value)}`); } }, input, h("button", {}, "Find"));
  const found = q ? (await api("GET", "/v1/graph/search", { query: { query: q, limit: 30 } })).hits.map((x) => x.entity)
    : (await api("GET", "/v1/graph/entities", { query: { limit: 100 } })).items;
  const side = h("aside", { id: "entities" }, form,
    h("ul", { class: "entity-list" }, found.map((e) => h("li", {}, link(`#/graph/${e.id}?depth=${params.get("depth") || 1}`, e.name, { class: e.id === arg ? "active" : null }), " ", h("small", {}, e.type)))),
    found.length ? null : h("p", { class: "muted" }, "No entities."));
  if (!arg) return [h("h1", {}, "Graph"), h("div", { class: "graph-layout" }, side, h("p", { class: "muted" }, "Pick an entity to see its neighbourhood."))];
  const depth = Math.min(6, Math.max(0, Number(params.get("depth") ?? 1)));
  const graph = await api("GET", `/v1/graph/entities/${enc(arg)}/neighborhood`, { query: { depth, max_nodes: 150 } });
  const centre = graph.nodes.find((n) => n.depth === 0);
  const slider = h("input", { type: "range", min: 0, max: 6, value: depth, id: "depth", "aria-label": "depth",
    oninput: () => (shown.textContent = slider.value), onchange: () => go(`#/graph/${arg}?depth=${slider.value}${q ? `&q=${enc(q)}` : ""}`) });
  const shown = h("output", { id: "depth-value" }, depth);
  const edgeRows = graph.edges.map((e) => h("tr", {}, h("td", {}, e.from_name), h("td", {}, e.label), h("td", {}, e.to_name), h("td", {}, e.mention_count)));
  return [h("h1", {}, "Graph around ", h("span", { id: "graph-centre" }, centre ? centre.name : arg)),
    h("div", { class: "graph-layout" }, side, h("section", {},
      h("p", { class: "inline" }, h("label", {}, "depth ", slider, " ", shown),
        h("span", { class: "muted", id: "graph-stats" }, ` ${graph.nodes.length} entities · ${graph.edges.length} relationships${graph.truncated ? " · truncated" : ""}`)),
      drawGraph(graph, depth), h("p", { class: "muted" }, "Click an entity to centre on it; drag to move it."),
      table(["from", "relationship", "to", "mentions"], edgeRows, { id: "edges" })))];
}

// variables, summaries, jobs -------------------------------------------------------------------
async function variablesView() {
  const { variables } = await api("GET", "/v1/variables");
  const rows = Object.entries(variables).map(([k, v]) => h("tr", {}, h("td", {}, h("code", {}, k)), h("td", {}, String(v)), h("td", {}, typeof v)));
  return [h("h1", {}, "Variables"), table(["name", "value", "type"], rows, { id: "variables" })];
}

async function summariesView({ arg, params }) {
  const sessions = (await api("GET", "/v1/sessions", { query: { limit: 500 } })).items;
  const history = params.get("history") === "1";
  const pick = h("select", { id: "summary-session", onchange: () => go(`#/summaries/${enc(pick.value)}`) },
    h("option", { value: "" }, "pick a session"), sessions.map((x) => h("option", { value: x.id, selected: x.id === arg }, x.id)));
  const top = [h("h1", {}, "Summaries"), h("p", { class: "inline" }, "session ", pick,
    arg ? link(`#/summaries/${enc(arg)}?history=${history ? 0 : 1}`, history ? "hide superseded" : "show superseded") : null)];
  if (!arg) return top;
  const page = await api("GET", "/v1/summaries", { query: { session_id: arg, include_history: history } });
  const remove = (m) => async () => {
    if (!(await confirmDelete(`Delete this summary? “${m.text.slice(0, 80)}”`))) return;
    await api("DELETE", `/v1/summaries/${enc(m.id)}`);
    toast("Summary deleted.");
    route();
  };
  const cards = page.items.map((m, i) => h("article", { class: `summary${m.invalid_at ? " gone" : ""}` },
    h("header", {}, i === 0 && !m.invalid_at ? badge("rolling") : null, " ", validity(m), " ", link(`#/memory/${m.id}`, "details"),
      " ", h("button", { class: "danger small", onclick: remove(m) }, "Delete")), h("p", {}, m.text)));
  return [...top, cards.length ? cards : h("p", { class: "muted" }, "No summaries for this session.")];
}

async function jobsView({ params }) {
  const all = params.get("all") === "1" && !state.bound;
  const only = params.get("state") || "";
  const query = all ? {} : state.tenant;
  const [stats, list] = await Promise.all([api("GET", "/v1/jobs/stats", { tenant: false, query }),
    api("GET", "/v1/jobs", { tenant: false, query: { ...query, state: only, limit: 200 } })]);
  const here = (st, a) => `#/jobs?state=${st}&all=${a ? 1 : 0}`;
  const retry = (job) => async () => {
    const done = await api("POST", `/v1/jobs/${job.id}/retry`, { tenant: false, query: all ? {} : state.tenant });
    toast(`Job ${done.id} is ${done.state} again.`);
    route();
  };
  const rows = list.items.map((j) => h("tr", { "data-job": j.id, "data-state": j.state }, h("td", {}, j.id), h("td", {}, j.kind), h("td", {}, badge(j.state)),
    h("td", {}, `${j.attempts}/${j.max_attempts}`), h("td", {}, `${j.user_id} / ${j.scope_id}`), h("td", { class: "error-text", title: j.last_error || "" }, (j.last_error || "").slice(0, 120)),
    h("td", {}, when(j.updated_at)), h("td", {}, j.state === "failed" ? h("button", { class: "small retry", onclick: retry(j) }, "Retry") : null)));
  return [h("h1", {}, "Jobs"),
    h("p", { class: "stats" }, Object.entries(stats).map(([k, v]) => link(here(k, all), [badge(k), ` ${v}`], { class: `stat ${k === only ? "active" : ""}` })),
      link(here("", all), "all states"), state.bound ? null : [" · ", link(here(only, !all), all ? "only this tenant" : "every tenant")]),
    table(["id", "kind", "state", "attempts", "tenant", "last error", "updated", ""], rows, { id: "jobs" })];
}

const VIEWS = { tenants: tenantsView, sessions: sessionsView, session: sessionView, memories: memoriesView, memory: memoryView,
  search: searchView, graph: graphView, variables: variablesView, summaries: summariesView, jobs: jobsView };
window.addEventListener("hashchange", route);
route();
