// scopegate's live page. Plain script, no framework: it reads serve's
// /v1/page routes and renders every field a call carries as text
// (textContent, never HTML): a command or a path is the agent's text.
"use strict";

(function () {
  const MAX_ROWS = 1000;
  const TOKEN_KEY = "scopegate-token";
  const SVG = "http://www.w3.org/2000/svg";
  const COLORS = ["#b42318", "#2454b8", "#9a6700", "#1f7a3f", "#7a2eb8", "#0e7490", "#c2410c", "#4d7c0f", "#be185d", "#475569"];

  const state = {
    token: sessionStorage.getItem(TOKEN_KEY) || "",
    csrf: "",
    lastId: "",
    rows: [], // newest first, at most MAX_ROWS
    sessions: new Set(),
    decisions: new Set(),
    reasons: new Set(),
    chart: [],
    colors: new Map(),
    verify: new Map(),
    branches: [],
    offers: { pending: [], settled: [] },
    timers: {},
  };

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };

  // --- requests -----------------------------------------------------------

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (state.token) h["Authorization"] = "Bearer " + state.token;
    return h;
  }

  class Unauthorized extends Error {}

  async function getJSON(path) {
    const r = await fetch(path, { headers: headers(), cache: "no-store" });
    if (r.status === 401) throw new Unauthorized();
    if (!r.ok) throw new Error(path + ": " + r.status);
    return r.json();
  }

  // --- the token ----------------------------------------------------------

  function showLogin(message) {
    $("main").hidden = true;
    $("login").hidden = false;
    $("token-error").textContent = message || "";
    setStatus("needs the token", "down");
    $("token").focus();
  }

  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem(TOKEN_KEY, state.token);
    $("token").value = "";
    start();
  });

  function setStatus(text, cls) {
    const s = $("status");
    s.textContent = text;
    s.className = "status " + (cls || "");
  }

  // --- start --------------------------------------------------------------

  let started = false;

  async function start() {
    try {
      await loadState();
    } catch (e) {
      if (e instanceof Unauthorized) {
        showLogin(state.token ? "That token was refused." : "");
        return;
      }
      setStatus("cannot reach serve: " + e.message, "down");
      setTimeout(start, 2000);
      return;
    }
    $("login").hidden = true;
    $("main").hidden = false;
    if (state.streamStopped) {
      state.streamStopped = false;
      connect();
    }
    if (started) return;
    started = true;
    connect();
    loadChart();
    loadVerify();
    setInterval(loadChart, 60000);
    setInterval(loadVerify, 60000);
    setInterval(() => loadState().catch(() => {}), 30000);
    setInterval(renderCountdowns, 1000);
  }

  async function loadState() {
    const st = await getJSON("/v1/page/state");
    state.csrf = st.csrf;
    state.branches = st.branches;
    $("offers-off").hidden = st.approvals;
    renderSessions();
  }

  // --- the stream ---------------------------------------------------------

  async function connect() {
    const h = headers({ Accept: "text/event-stream" });
    if (state.lastId) h["Last-Event-ID"] = state.lastId;
    let r;
    try {
      r = await fetch("/v1/page/events", { headers: h, cache: "no-store" });
    } catch (e) {
      return reconnect();
    }
    if (r.status === 401) {
      state.streamStopped = true;
      return showLogin("That token was refused.");
    }
    if (!r.ok || !r.body) return reconnect();
    setStatus("live", "live");
    const reader = r.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          dispatch(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch (e) {
      // the connection dropped: reconnect below
    }
    reconnect();
  }

  function reconnect() {
    setStatus("reconnecting…", "down");
    setTimeout(connect, 1000);
  }

  function dispatch(block) {
    let event = "message", id = null, data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const c = line.indexOf(":");
      const field = c < 0 ? line : line.slice(0, c);
      let value = c < 0 ? "" : line.slice(c + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "id") id = value;
      else if (field === "data") data += (data ? "\n" : "") + value;
    }
    if (!data) return;
    const msg = JSON.parse(data);
    switch (event) {
      case "hello":
        if (msg.reset) {
          state.rows = [];
          $("feed-body").textContent = "";
        }
        break;
      case "decision":
        if (id) state.lastId = id;
        addRow(msg);
        break;
      case "offers":
        state.offers = msg;
        renderOffers();
        break;
    }
  }

  // --- the feed -----------------------------------------------------------

  const pending = [];
  let frame = 0;

  function addRow(row) {
    state.rows.unshift(row);
    if (state.rows.length > MAX_ROWS) state.rows.length = MAX_ROWS;
    pending.push(row);
    const who = row.session + "/" + row.branch;
    addOption("f-session", state.sessions, who);
    addOption("f-decision", state.decisions, row.decision);
    if (row.reason) addOption("f-reason", state.reasons, row.reason);
    if (row.decision === "denied") countDenial(row.reason);
    if (!state.branches.some((b) => b.session === row.session && b.branch === row.branch)) {
      // A new branch: its scope and its chain soon.
      later("state", 500, () => loadState().catch(() => {}));
      later("verify-new", 1000, loadVerify);
    } else if (row.decision === "expanded") {
      later("state", 500, () => loadState().catch(() => {}));
    }
    // Verifying reads a branch's whole tools.org again once it changed:
    // while the agents work, at most every 30 s.
    later("verify", 30000, loadVerify);
    if (!frame) frame = requestAnimationFrame(flush);
  }

  // flush puts the rows that came since the last frame at the top of the
  // list, and keeps the list at MAX_ROWS: one DOM change per frame.
  function flush() {
    frame = 0;
    const body = $("feed-body");
    const frag = document.createDocumentFragment();
    for (let i = pending.length - 1; i >= 0; i--) {
      if (matches(pending[i])) frag.appendChild(rowElement(pending[i]));
    }
    pending.length = 0;
    body.insertBefore(frag, body.firstChild);
    while (body.childElementCount > MAX_ROWS) body.lastElementChild.remove();
    $("feed-count").textContent = body.childElementCount + " shown";
  }

  function filters() {
    return { session: $("f-session").value, decision: $("f-decision").value, reason: $("f-reason").value };
  }

  function matches(row) {
    const f = filters();
    return (!f.session || f.session === row.session + "/" + row.branch) &&
      (!f.decision || f.decision === row.decision) &&
      (!f.reason || f.reason === row.reason);
  }

  function rebuild() {
    const body = $("feed-body");
    const frag = document.createDocumentFragment();
    for (const row of state.rows) if (matches(row)) frag.appendChild(rowElement(row));
    body.textContent = "";
    body.appendChild(frag);
    $("feed-count").textContent = body.childElementCount + " shown";
  }

  for (const id of ["f-session", "f-decision", "f-reason"]) $(id).addEventListener("change", rebuild);

  function rowElement(row) {
    const tr = el("tr");
    tr.dataset.callId = row.call_id;
    tr.appendChild(el("td", "mono", new Date(row.time).toLocaleTimeString([], { hour12: false })));
    const who = el("td", "who", row.session + "/" + row.branch);
    who.title = who.textContent;
    tr.appendChild(who);
    tr.appendChild(el("td", null, row.via || row.mode || ""));
    tr.appendChild(el("td", null, row.agent_tool ? row.tool + " (" + row.agent_tool + ")" : row.tool));
    const call = el("td", "call", row.summary);
    call.title = row.message || row.summary;
    tr.appendChild(call);
    let d = row.decision;
    if (row.approved) d += " (" + row.approved + ", " + row.channel + ")";
    else if (row.answer) d += " (" + row.answer + ", " + row.channel + ")";
    tr.appendChild(el("td", "d-" + row.decision, d));
    tr.appendChild(el("td", null, row.reason || ""));
    tr.appendChild(el("td", "mono", row.rule || ""));
    return tr;
  }

  function addOption(id, seen, value) {
    if (!value || seen.has(value)) return;
    seen.add(value);
    const o = el("option", null, value);
    o.value = value;
    $(id).appendChild(o);
  }

  function later(name, ms, fn) {
    if (state.timers[name]) return;
    state.timers[name] = setTimeout(() => {
      state.timers[name] = 0;
      fn();
    }, ms);
  }

  // --- offers -------------------------------------------------------------

  function renderOffers() {
    const list = $("offer-list");
    const pending = state.offers.pending || [];
    const keep = new Map();
    for (const card of list.children) keep.set(card.dataset.id, card);
    list.textContent = "";
    for (const o of pending) list.appendChild(keep.get(o.id) || offerCard(o));
    $("offers-empty").hidden = pending.length > 0;
    $("offer-count").textContent = pending.length ? "(" + pending.length + ")" : "";
    const settled = $("settled");
    settled.textContent = "";
    for (const s of (state.offers.settled || []).slice(-5).reverse()) {
      settled.appendChild(el("li", null, s.summary + " — " + s.answer + " through " + s.channel));
    }
    renderCountdowns();
  }

  function offerCard(o) {
    const card = el("div", "offer");
    card.dataset.id = o.id;
    card.dataset.expires = o.expires;
    card.appendChild(el("div", "meta", o.session + "/" + o.branch + " · via " + o.via + " · asked through " + o.channels.join(" and ")));
    card.appendChild(el("div", "what", o.summary));
    card.appendChild(el("div", "why", o.message));
    const w = el("div", null, "Widening: ");
    w.appendChild(el("span", "widening", o.widening));
    card.appendChild(w);
    const buttons = el("div", "buttons");
    const result = el("span", "note");
    for (const [answer, label] of [["once", "Once"], ["session", "Session"], ["deny", "Deny"]]) {
      const b = el("button", answer, label);
      b.type = "button";
      b.title = {
        once: "run this call only; the scope stays as it is",
        session: "add the widening to this session's scope.yml (recorded), then run the call",
        deny: "refuse the call",
      }[answer];
      b.addEventListener("click", () => answerOffer(o.id, answer, buttons, result));
      buttons.appendChild(b);
    }
    const left = el("span", "note countdown");
    buttons.appendChild(left);
    buttons.appendChild(result);
    card.appendChild(buttons);
    return card;
  }

  async function answerOffer(id, answer, buttons, result) {
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    let r;
    try {
      r = await fetch("/v1/page/offers/" + encodeURIComponent(id), {
        method: "POST",
        headers: headers({ "Content-Type": "application/json", "X-Scopegate-CSRF": state.csrf }),
        body: JSON.stringify({ answer: answer }),
      });
    } catch (e) {
      result.textContent = "not sent: " + e.message;
      for (const b of buttons.querySelectorAll("button")) b.disabled = false;
      return;
    }
    if (r.ok) {
      result.textContent = "answered " + answer;
      return;
    }
    let msg = r.status + "";
    try {
      msg = (await r.json()).error.message;
    } catch (e) {
      // not JSON: the status says it
    }
    result.textContent = msg;
    if (r.status === 401) showLogin("That token was refused.");
  }

  function renderCountdowns() {
    const now = Date.now();
    for (const card of $("offer-list").children) {
      const left = Math.max(0, Math.round((Date.parse(card.dataset.expires) - now) / 1000));
      const c = card.querySelector(".countdown");
      if (c) c.textContent = "denied in " + left + " s unless answered";
    }
  }

  // --- sessions and the audit chain ---------------------------------------

  // list shows a scope list at a glance: its first entries, and how many
  // more (all of them in its tooltip).
  function list(items) {
    const GLANCE = 10;
    const ul = el("ul", "list");
    for (const i of items.slice(0, GLANCE)) ul.appendChild(el("li", null, i));
    if (items.length > GLANCE) {
      ul.appendChild(el("li", "note", "+" + (items.length - GLANCE) + " more"));
      ul.title = items.join("\n");
    }
    if (!items.length) ul.appendChild(el("li", "note", "none"));
    return ul;
  }

  function renderSessions() {
    const body = $("sessions-body");
    const frag = document.createDocumentFragment();
    for (const b of state.branches) {
      const tr = el("tr");
      const who = el("td", "mono", b.session + "/" + b.branch);
      if (b.current) who.appendChild(el("span", "note", " (current)"));
      tr.appendChild(who);
      tr.appendChild(el("td", "mode-" + b.mode, b.mode));
      if (b.scope) {
        tr.appendChild(el("td")).appendChild(list(b.scope.read));
        tr.appendChild(el("td")).appendChild(list(b.scope.write));
        const cmds = b.scope.commands.slice();
        for (const d of b.scope.denied_commands) cmds.push("not: " + d);
        tr.appendChild(el("td")).appendChild(list(cmds));
        tr.appendChild(el("td")).appendChild(list(b.scope.network));
      } else {
        const td = el("td", "broken", "no usable scope: " + (b.scope_error || "") + " (every call is denied)");
        td.colSpan = 4;
        tr.appendChild(td);
      }
      const v = el("td");
      v.dataset.branch = b.session + "/" + b.branch;
      tr.appendChild(v);
      frag.appendChild(tr);
    }
    body.textContent = "";
    body.appendChild(frag);
    renderVerify();
  }

  async function loadVerify() {
    try {
      for (const v of await getJSON("/v1/page/verify")) state.verify.set(v.session + "/" + v.branch, v);
    } catch (e) {
      return;
    }
    renderVerify();
  }

  function renderVerify() {
    for (const td of $("sessions-body").querySelectorAll("td[data-branch]")) {
      const v = state.verify.get(td.dataset.branch);
      if (!v) continue;
      if (v.error) {
        td.className = "broken";
        td.textContent = "cannot verify: " + v.error;
      } else if (v.ok) {
        td.className = "ok";
        td.textContent = "holds (" + v.entries + " entries)";
      } else {
        td.className = "broken";
        const br = v.break || {};
        td.textContent = "broken: " + br.kind + " at line " + br.line + (br.detail ? " — " + br.detail : "");
      }
    }
  }

  // --- the chart ----------------------------------------------------------

  async function loadChart() {
    try {
      state.chart = await getJSON("/v1/page/denials");
    } catch (e) {
      return;
    }
    drawChart();
  }

  function countDenial(reason) {
    const now = new Date();
    const minute = new Date(now.getFullYear(), now.getMonth(), now.getDate(), now.getHours(), now.getMinutes()).getTime();
    let last = state.chart[state.chart.length - 1];
    if (!last || Date.parse(last.start) < minute) {
      last = { start: new Date(minute).toISOString(), counts: {} };
      state.chart.push(last);
    }
    last.counts[reason] = (last.counts[reason] || 0) + 1;
    later("chart", 1000, drawChart);
  }

  function colorOf(reason) {
    if (!state.colors.has(reason)) state.colors.set(reason, COLORS[state.colors.size % COLORS.length]);
    return state.colors.get(reason);
  }

  function drawChart() {
    const svg = $("chart-svg");
    const W = 600, H = 120, slot = W / 60;
    const now = Date.now();
    let max = 1;
    for (const m of state.chart) {
      let sum = 0;
      for (const r in m.counts) sum += m.counts[r];
      max = Math.max(max, sum);
    }
    svg.textContent = "";
    const reasons = new Set();
    for (const m of state.chart) {
      const age = Math.floor((now - Date.parse(m.start)) / 60000);
      if (age < 0 || age >= 60) continue;
      const x = W - (age + 1) * slot;
      let y = H;
      for (const r of Object.keys(m.counts).sort()) {
        const h = (m.counts[r] / max) * (H - 10);
        y -= h;
        reasons.add(r);
        const rect = document.createElementNS(SVG, "rect");
        rect.setAttribute("x", x + 1);
        rect.setAttribute("y", y);
        rect.setAttribute("width", slot - 2);
        rect.setAttribute("height", h);
        rect.setAttribute("fill", colorOf(r));
        const t = document.createElementNS(SVG, "title");
        t.textContent = r + ": " + m.counts[r] + " at " + new Date(m.start).toLocaleTimeString();
        rect.appendChild(t);
        svg.appendChild(rect);
      }
    }
    const legend = $("legend");
    legend.textContent = "";
    for (const r of [...reasons].sort()) {
      const item = el("span");
      const sw = document.createElementNS(SVG, "svg");
      sw.setAttribute("width", "10");
      sw.setAttribute("height", "10");
      sw.setAttribute("class", "swatch");
      const box = document.createElementNS(SVG, "rect");
      box.setAttribute("width", "10");
      box.setAttribute("height", "10");
      box.setAttribute("fill", colorOf(r));
      sw.appendChild(box);
      item.appendChild(sw);
      item.appendChild(document.createTextNode(r));
      legend.appendChild(item);
    }
    if (!reasons.size) legend.appendChild(el("span", "note", "no denials in the last hour"));
  }

  start();
})();
