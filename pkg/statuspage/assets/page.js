// hearth's status page. Plain DOM, no framework: everything it shows comes
// from /api/state with the page's secret (see page.go), and every string
// from the daemon is set as text, never as markup.
"use strict";

const SECRET = "hearth-secret";
let secret = sessionStorage.getItem(SECRET);

const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else if (k === "onclick") e.addEventListener("click", v);
    else e[k] = v;
  }
  for (const kid of kids) {
    if (kid == null) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}
const mb = (b) => (b / 1e6).toFixed(1) + " MB";
function dur(s) {
  s = Math.round(s || 0);
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + (s % 60) + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
  return Math.floor(s / 86400) + "d" + Math.floor((s % 86400) / 3600) + "h";
}

async function api(path, body) {
  const init = { headers: { "X-Hearth-Secret": secret || "" } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const j = await r.json().catch(() => ({}));
  if (r.status === 403 && !j.error?.includes("Origin")) closed();
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}

function closed() {
  sessionStorage.removeItem(SECRET);
  secret = null;
  $("closed").hidden = false;
  $("savings-card").hidden = true;
}

function problem(msg) {
  $("problem").hidden = !msg;
  $("problem").textContent = msg || "";
}

async function boot() {
  const m = location.hash.match(/t=([0-9a-f]+)/);
  if (m) {
    history.replaceState(null, "", "/");
    const r = await fetch("/api/open", { method: "POST", headers: { "X-Hearth-Token": m[1] } });
    if (r.ok) {
      secret = (await r.json()).secret;
      sessionStorage.setItem(SECRET, secret);
    }
  }
  if (!secret) {
    closed();
    return;
  }
  $("sweep-look").addEventListener("click", look);
  await refresh();
  look();
  setInterval(refresh, 2000);
}

async function refresh() {
  if (!secret) return;
  try {
    render(await api("/api/state"));
    problem("");
  } catch (e) {
    if (secret) problem("The daemon did not answer: " + e.message);
  }
}

function render(st) {
  const d = st.daemon;
  $("daemon").textContent = `hearthd ${d.version} · pid ${d.pid} · up ${dur(d.uptimeSeconds)} · ${mb(d.rssBytes)} resident (${mb(d.heapBytes)} heap) · ${d.connections} connections · ${d.requests} requests, ${d.errors} errors`;
  renderSavings(st.savings);
  renderServers(st.servers || []);
  const body = $("tools").tBodies[0];
  body.replaceChildren(...(st.tools || []).map((t) =>
    el("tr", {}, el("td", {}, t.name), el("td", { class: "n" }, t.calls), el("td", { class: "n" }, t.errors),
      el("td", { class: "n" }, t.calls ? t.p50_ms.toFixed(2) : "-"), el("td", { class: "n" }, t.calls ? t.p99_ms.toFixed(2) : "-"))));
}

function renderSavings(s) {
  const f = s.now;
  $("savings-card").hidden = false;
  $("saved-procs").textContent = f.savedProcs;
  $("saved-rss").textContent = mb(f.savedRssBytes);
  const set = (id, v, text) => {
    const e = $(id);
    e.textContent = text;
    e.dataset[id.endsWith("rss") ? "bytes" : "n"] = v;
  };
  set("direct-procs", f.directProcs, f.directProcs);
  set("direct-rss", f.directRssBytes, mb(f.directRssBytes));
  set("hearth-procs", f.hearthProcs, f.hearthProcs);
  set("hearth-rss", f.hearthRssBytes, mb(f.hearthRssBytes));
  $("clients-n").textContent = `${f.clients} windows on ${f.servers} running servers`;
  $("hearth-note").textContent = `each server once, its keeper, and ${f.shimProcs} shims (${mb(f.shimRssBytes)})`;
  $("savings-line").textContent = s.line + (s.peak && s.peak.at ? ` · most saved since the daemon started: ${mb(s.peak.directRssBytes - s.peak.hearthRssBytes)}` : "");
  chart(s.history || []);
}

function chart(hist) {
  const svg = $("chart");
  const NS = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  const W = 720, H = 200, L = 56, B = 22, T = 10;
  if (hist.length === 0) return;
  const t0 = Date.parse(hist[0].at), t1 = Math.max(Date.parse(hist[hist.length - 1].at), t0 + 1);
  const top = Math.max(1, ...hist.map((h) => Math.max(h.directRssBytes, h.hearthRssBytes))) * 1.1;
  const x = (t) => L + ((Date.parse(t) - t0) / (t1 - t0)) * (W - L - 8);
  const y = (v) => T + (1 - v / top) * (H - T - B);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text != null) e.textContent = text;
    svg.append(e);
  };
  for (let i = 0; i <= 4; i++) {
    const v = (top / 4) * i;
    add("line", { x1: L, x2: W - 8, y1: y(v), y2: y(v), stroke: "#e5e9ee" });
    add("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, mb(v).replace(".0 MB", " MB"));
  }
  const line = (key, color) => {
    const pts = hist.map((h) => `${x(h.at).toFixed(1)},${y(h[key]).toFixed(1)}`).join(" ");
    add("polyline", { points: hist.length === 1 ? pts + " " + pts.replace(/^[\d.]+/, String(W - 8)) : pts, fill: "none", stroke: color, "stroke-width": 2.5 });
  };
  line("directRssBytes", "#c2410c");
  line("hearthRssBytes", "#0f766e");
  add("text", { x: L, y: H - 6 }, new Date(t0).toLocaleTimeString());
  add("text", { x: W - 8, y: H - 6, "text-anchor": "end" }, new Date(t1).toLocaleTimeString());
  $("chart-span").textContent = `· since the daemon started (${hist.length} samples)`;
}

function renderServers(list) {
  $("servers-n").textContent = `(${list.length})`;
  if (list.length === 0) {
    $("servers").replaceChildren(el("p", { class: "muted" }, "No hosted server yet: put `hearth run` before a server's command in your client's config (or run `hearthd adopt`)."));
    return;
  }
  $("servers").replaceChildren(...list.map(server));
}

function server(s) {
  const st = s.status, m = s.measure;
  const act = (action) => async (ev) => {
    ev.target.disabled = true;
    try {
      await api("/api/action", { action, name: st.key });
      await refresh();
    } catch (e) {
      problem(`${action} ${st.name}: ${e.message}`);
    } finally {
      ev.target.disabled = false;
    }
  };
  const actions = el("span", { class: "actions" },
    el("button", { type: "button", class: "restart", onclick: act("restart") }, "Restart"),
    el("button", { type: "button", class: "stop danger", onclick: act("stop") }, "Stop"),
    st.catalog ? el("button", { type: "button", class: "forget", onclick: act("forget") }, "Forget catalog") : null);
  const meta = [st.sharing && `sharing ${st.sharing}`, st.scope && `for ${st.scope}`, `key ${st.key}`, st.era && `protocol ${st.era}`,
    st.pid && `up ${dur(st.uptimeSeconds)}`, `${st.restarts} restarts`,
    st.catalog && `catalog ${st.catalog.tools} tools, ${dur(st.catalog.ageSeconds)} old${st.catalog.answers ? "" : " (not answered from)"}`].filter(Boolean).join(" · ");
  const clients = el("table", { class: "list clients" }, el("thead", {}, el("tr", {}, el("th", {}, "client"), el("th", {}, "window"), el("th", {}, "pid (shim)"), el("th", {}, "since"))),
    el("tbody", {}, ...(s.clients || []).map((c) => el("tr", { "data-client": c.name || "" },
      el("td", {}, (c.name || "(no initialize)") + (c.version ? " " + c.version : "")), el("td", {}, c.cwd || "-"), el("td", {}, (c.pid || "-") + (c.shim_pid ? ` (${c.shim_pid})` : "")),
      el("td", {}, new Date(c.since).toLocaleTimeString())))));
  const procs = el("table", { class: "list procs" }, el("thead", {}, el("tr", {}, el("th", {}, "pid"), el("th", {}, "process"), el("th", {}, "RSS"), el("th", {}, "CPU"), el("th", {}, "command"))),
    el("tbody", {}, ...(m.procs || []).map((p) => el("tr", {},
      el("td", {}, p.pid), el("td", {}, p.keeper ? "hearth-keeper (hearth's)" : p.name), el("td", { class: "n" }, mb(p.rssBytes)),
      el("td", { class: "n" }, `${p.cpuPercent.toFixed(1)}% (${p.cpuSeconds.toFixed(1)}s)`), el("td", { class: "cmd" }, p.command)))));
  return el("div", { class: "server", "data-server": st.name, "data-key": st.key, "data-pid": st.pid || 0, "data-clients": st.clients },
    el("div", { class: "head" }, el("h3", {}, st.name), el("span", { class: "badge " + st.state }, st.state),
      el("span", { class: "muted" }, `${st.clients} ${st.clients === 1 ? "window" : "windows"} · one tree of ${m.treeProcs} processes, ${mb(m.treeRssBytes)} · a direct spawn per window: ${m.directProcs} processes, ${mb(m.directRssBytes)}`), actions),
    el("div", { class: "meta" }, st.server, " · ", meta),
    st.lastError ? el("div", { class: "error" }, "last error: " + st.lastError) : null,
    el("div", { class: "cols" }, el("div", {}, clients), el("div", {}, procs)),
    (s.logTail || []).length ? el("pre", { class: "log" }, s.logTail.join("\n")) : null);
}

async function look() {
  let list;
  try {
    list = (await api("/api/sweep")).orphans;
  } catch (e) {
    $("sweep").replaceChildren(el("p", { class: "error" }, e.message));
    return;
  }
  if (list.length === 0) {
    $("sweep").replaceChildren(el("p", { class: "muted" }, "Nothing left behind."));
    return;
  }
  const end = (targets, what) => async (ev) => {
    if (!confirm(`End ${what}? Each of its processes gets SIGTERM, then SIGKILL.`)) return;
    ev.target.disabled = true;
    try {
      await api("/api/sweep/kill", { targets: targets.map((o) => ({ pid: o.pid, start: o.start })) });
    } catch (e) {
      problem("ending what was left behind: " + e.message);
    }
    look();
  };
  const total = list.reduce((a, o) => a + o.rssBytes, 0);
  $("sweep").replaceChildren(
    el("table", { class: "list" }, el("thead", {}, el("tr", {}, el("th", {}, "pid"), el("th", {}, "name"), el("th", {}, "age"), el("th", {}, "RSS"), el("th", {}, "processes"),
      el("th", {}, "client"), el("th", {}, "command"), el("th", {}))),
      el("tbody", {}, ...list.map((o) => el("tr", { "data-orphan": o.pid },
        el("td", {}, o.pid), el("td", {}, o.name), el("td", {}, dur(o.ageSeconds)), el("td", { class: "n" }, mb(o.rssBytes)), el("td", { class: "n" }, o.procs.length),
        el("td", {}, o.client || "-"), el("td", { class: "cmd" }, o.command),
        el("td", {}, el("button", { type: "button", class: "danger", onclick: end([o], `${o.name} (pid ${o.pid})`) }, "End")))))),
    el("p", {}, el("button", { type: "button", class: "danger", onclick: end(list, `all ${list.length} (${mb(total)})`) }, `End all ${list.length} (${mb(total)})`)));
}

boot();
