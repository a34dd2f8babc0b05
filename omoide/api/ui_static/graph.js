// The entity graph as SVG: a small deterministic force layout, no library. Text goes in as text
// nodes only, so an entity's name can never inject markup.
const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) el.setAttribute(k, v);
  el.append(...kids.flat().map((k) => (k instanceof Node ? k : String(k))));
  return el;
}

// Radial seed (depth d on ring d), then Fruchterman-Reingold forces plus a pull back to the ring:
// no randomness, so the same neighbourhood always draws the same, reading outward from its centre.
function layout(nodes, edges, w, ht) {
  const cx = w / 2, cy = ht / 2, ring = (Math.min(w, ht) / 2 - 50) / Math.max(1, ...nodes.map((n) => n.depth));
  const byDepth = new Map();
  nodes.forEach((n) => byDepth.set(n.depth, [...(byDepth.get(n.depth) || []), n]));
  for (const [d, group] of byDepth) {
    group.forEach((n, i) => {
      const angle = (2 * Math.PI * i) / group.length + d * 0.7;
      n.x = cx + d * ring * Math.cos(angle);
      n.y = cy + d * ring * Math.sin(angle);
    });
  }
  const at = new Map(nodes.map((n) => [n.id, n]));
  const k = Math.sqrt((w * ht) / Math.max(nodes.length, 1)) * 0.6; // the ideal edge length
  for (let step = 0, heat = ring / 2; step < 240; step++, heat *= 0.985) {
    for (const n of nodes) n.dx = n.dy = 0;
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) { // every pair repels
        const a = nodes[i], b = nodes[j], dx = a.x - b.x || 0.01, dy = a.y - b.y;
        const f = (k * k) / (dx * dx + dy * dy || 0.01);
        a.dx += dx * f; a.dy += dy * f; b.dx -= dx * f; b.dy -= dy * f;
      }
    }
    for (const e of edges) { // each edge pulls its ends together
      const a = at.get(e.from_id), b = at.get(e.to_id);
      if (!a || !b || a === b) continue;
      const dx = a.x - b.x, dy = a.y - b.y, f = Math.hypot(dx, dy) / k;
      a.dx -= dx * f; a.dy -= dy * f; b.dx += dx * f; b.dy += dy * f;
    }
    for (const n of nodes) {
      if (n.depth === 0) { n.x = cx; n.y = cy; continue; }
      const rx = n.x - cx, ry = n.y - cy, r = Math.hypot(rx, ry) || 0.01, pull = (n.depth * ring - r) * 0.02 * k;
      n.dx += (rx / r) * pull; n.dy += (ry / r) * pull;
      const len = Math.hypot(n.dx, n.dy) || 1, move = Math.min(len, heat); // cooling caps each move
      n.x = Math.min(w - 30, Math.max(30, n.x + (n.dx / len) * move));
      n.y = Math.min(ht - 20, Math.max(36, n.y + (n.dy / len) * move)); // room for the label above
    }
  }
}

function edgeShape(e, at) {
  const line = s("line", { "marker-end": "url(#arrow)" });
  const label = s("text", { class: "edge-label" }, e.label);
  const place = () => { // the line stops at the target's rim, so its arrowhead shows
    const a = at.get(e.from_id), b = at.get(e.to_id), d = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const cut = (d - b.r - 3) / d;
    line.setAttribute("x1", a.x); line.setAttribute("y1", a.y);
    line.setAttribute("x2", a.x + (b.x - a.x) * cut); line.setAttribute("y2", a.y + (b.y - a.y) * cut);
    label.setAttribute("x", (a.x + b.x) / 2); label.setAttribute("y", (a.y + b.y) / 2 - 4);
  };
  place();
  return { e, place, el: s("g", { class: "edge" }, line, label) };
}

// A node is dragged with the pointer; a click (or Enter) without a drag centres the graph on it.
function nodeShape(n, svg, lines, onCentre) {
  const g = s("g", {
    class: `node depth-${Math.min(n.depth, 4)}`, "data-name": n.name, "data-id": n.id,
    transform: `translate(${n.x},${n.y})`, tabindex: 0,
  }, s("title", {}, `${n.name} (${n.type}) · ${n.mention_count} mentions · depth ${n.depth}`),
  s("circle", { r: n.r }), s("text", { y: -n.r - 5 }, n.name));
  let drag = null;
  g.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, moved: false };
    g.setPointerCapture(ev.pointerId);
  });
  g.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const scale = svg.viewBox.baseVal.width / svg.getBoundingClientRect().width;
    n.x += (ev.clientX - drag.x) * scale;
    n.y += (ev.clientY - drag.y) * scale;
    drag = { x: ev.clientX, y: ev.clientY, moved: true };
    g.setAttribute("transform", `translate(${n.x},${n.y})`);
    lines.forEach((l) => (l.e.from_id === n.id || l.e.to_id === n.id) && l.place());
  });
  const centre = () => n.depth > 0 && onCentre(n.id);
  g.addEventListener("pointerup", () => { const moved = drag && drag.moved; drag = null; if (!moved) centre(); });
  g.addEventListener("keydown", (ev) => ev.key === "Enter" && centre());
  return g;
}

// The picture of a /v1 neighbourhood (`{nodes, edges}`); `onCentre(entityId)` on a click.
export function drawGraph(graph, onCentre) {
  const W = 900, H = 560, at = new Map(graph.nodes.map((n) => [n.id, n]));
  graph.nodes.forEach((n) => (n.r = Math.min(22, 9 + 2 * Math.log2(1 + n.mention_count))));
  layout(graph.nodes, graph.edges, W, H);
  const arrow = s("marker", {
    id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto",
  }, s("path", { d: "M0,0L10,5L0,10z" }));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, id: "graph-svg", role: "img", "aria-label": "entity graph" },
    s("defs", {}, arrow));
  const lines = graph.edges.filter((e) => at.has(e.from_id) && at.has(e.to_id)).map((e) => edgeShape(e, at));
  svg.append(s("g", {}, lines.map((l) => l.el)),
    s("g", {}, graph.nodes.map((n) => nodeShape(n, svg, lines, onCentre))));
  return svg;
}
