// The management page of harness: the MCP servers of the host, live from the remote API's
// mcpManager/watch stream, with their actions and detail. No framework: every element is
// built with el() from text (never from HTML strings), so nothing a server sends can
// become markup.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);

  // el builds an element: el("td", {class: "num", dataset: {name: "x"}}, "text", child…).
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "dataset") Object.assign(e.dataset, v);
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat()) {
      if (kid === undefined || kid === null || kid === false) continue;
      e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
  }

  // ---- the API ----------------------------------------------------------------------

  class APIError extends Error {
    constructor(code, message, status) { super(message); this.code = code; this.status = status; }
  }

  function call(method, params) { return post("/v1/call/" + method, params); }

  // claim marks a request whose answer will be drawn in node, and returns current(): true
  // while no later request for the same node has been made. A slow answer, or a slow
  // failure, is dropped instead of drawn over what a later choice put there.
  const claims = new WeakMap();
  function claim(node) {
    const n = (claims.get(node) || 0) + 1;
    claims.set(node, n);
    return () => claims.get(node) === n;
  }

  async function post(path, params) {
    const resp = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(params === undefined ? null : params),
    });
    let body = null;
    try { body = await resp.json(); } catch (_) { /* not JSON */ }
    if (!resp.ok) {
      const e = (body && body.error) || { code: "bad_response", message: "HTTP " + resp.status };
      if (resp.status === 401) signedOut();
      throw new APIError(e.code, e.message, resp.status);
    }
    return body ? body.result : null;
  }

  // signIn exchanges the token in the URL's fragment (if any) for the session cookie and
  // removes it from the address bar and the history.
  async function signIn() {
    const m = /(?:^#|&)token=([0-9a-f]{64})(?:&|$)/.exec(location.hash);
    if (!m) return;
    history.replaceState(null, "", location.pathname + location.search);
    const resp = await fetch("/v1/session", {
      method: "POST", credentials: "same-origin",
      headers: { "Authorization": "Bearer " + m[1] },
    });
    if (!resp.ok) throw new APIError("unauthorized", "the token in the URL was refused", resp.status);
  }

  function signedOut() {
    $("#app").hidden = true;
    $("#signin").hidden = false;
    setConn("down", "not signed in");
  }

  function setConn(state, text) {
    const c = $("#conn");
    c.dataset.state = state;
    c.textContent = text;
  }

  // ---- state ------------------------------------------------------------------------

  const state = {
    methods: new Set(),
    servers: new Map(),   // name → view (managed servers, in the manager's order)
    unmanaged: new Map(), // name → client status (profile rows)
    probes: new Map(),    // name → {busy, result, error}
    busy: new Map(),      // name → action in progress
    notes: new Map(),     // name → message of the last failed action
    selected: null,
    tab: "tools",
    tools: new Map(),     // server → tool infos (console/tools)
    toolFilter: new Map(), // server → the text of its tool filter
  };

  // perf collects when snapshots arrived and when they were painted (performance.now()
  // milliseconds), and how long the apps' bridge took to load, for the browser test's
  // measurements.
  const perf = { snapshots: [], changes: [] };
  window.__harness = { perf, state };

  const has = (m) => state.methods.has(m);

  // ---- activity log -----------------------------------------------------------------

  function activity(text, kind) {
    const t = new Date();
    const li = el("li", { class: kind || "" },
      el("time", { datetime: t.toISOString() }, t.toLocaleTimeString([], { hour12: false })),
      el("span", {}, text));
    const list = $("#activity");
    list.prepend(li);
    while (list.children.length > 500) list.lastChild.remove();
  }

  // ---- calls in flight (mcpManager/progress) ----------------------------------------

  const inflight = new Map(); // id → {p, recv, li}
  const ended = new Set();    // ids whose end was shown: a late progress value never brings one back

  function elapsedText(f) {
    const ms = f.p.elapsedNs / 1e6 + (performance.now() - f.recv);
    return ms < 10000 ? (ms / 1000).toFixed(1) + " s" : Math.round(ms / 1000) + " s";
  }

  function onProgress(p, recv) {
    let f = inflight.get(p.id);
    const what = p.server + " · " + (p.method === "resources/read" ? "read " : "") + p.target;
    if (ended.has(p.id)) return;
    if (p.done) {
      ended.add(p.id);
      if (ended.size > 4096) ended.delete(ended.values().next().value);
      if (f) { f.li.remove(); inflight.delete(p.id); }
      activity(what + (p.error ? " failed after " : " finished after ") + (p.elapsedNs / 1e9).toFixed(1) + " s" +
        (p.error ? ": " + p.error : ""), p.error ? "bad" : "");
    } else {
      if (!f) {
        f = { li: el("li", { dataset: { progress: p.id, server: p.server, target: p.target } }) };
        inflight.set(p.id, f);
        $("#inflight").append(f.li);
      }
      f.p = p;
      f.recv = recv;
      const bar = el("progress", { "aria-label": "progress of " + what });
      if (p.total > 0) { bar.max = p.total; bar.value = Math.min(p.progress, p.total); }
      const pct = p.total > 0 ? Math.round(100 * Math.min(p.progress, p.total) / p.total) + "%" : String(p.progress);
      f.li.replaceChildren(
        el("span", { class: "what mono" }, what),
        bar,
        el("span", { class: "pct" }, pct),
        el("span", { class: "msg" }, p.message || ""),
        el("span", { class: "elapsed" }, elapsedText(f)));
    }
    $("#inflight-box").hidden = inflight.size === 0;
  }

  // ---- elicitations (console/elicitations, console/answer) --------------------------

  const questions = new Map(); // id → card

  function onElicitation(ev) {
    if (ev.type === "pending") {
      if (questions.has(ev.id)) return;
      const card = questionCard(ev);
      questions.set(ev.id, card);
      // A question raised by a call made from this tab shows next to that call, and one
      // raised by a chat's call next to the call in the conversation.
      const form = !ev.session && ev.call && document.querySelector('form[data-ref="' + CSS.escape(ev.call) + '"]');
      if (form) {
        card.dataset.here = "call";
        form.querySelector(".out").before(card);
      } else if (!chatQuestion(card, ev)) {
        $("#questions").append(card);
      }
      activity(ev.server + " asks: " + (ev.message || "(no message)"));
    } else if (ev.type === "done") {
      const card = questions.get(ev.id);
      if (card) { card.remove(); questions.delete(ev.id); }
      activity(ev.server + "'s question " + (ev.action ? "answered: " + ev.action : "ended (answered elsewhere, cancelled or timed out)"));
    }
    $("#questions-box").hidden = $("#questions").childElementCount === 0;
    // The tab's title counts the questions waiting, for a page kept in the background.
    document.title = (questions.size ? "(" + questions.size + ") " : "") + baseTitle;
  }

  const baseTitle = document.title;
  let callSeq = 0; // names the page's calls (console/callTool's ref)

  // fieldInput builds the input of one form field, its default filled in.
  function fieldInput(id, f) {
    const d = f.default;
    switch (f.kind) {
      case "boolean": {
        const i = el("input", { id, type: "checkbox" });
        i.checked = d === true;
        return i;
      }
      case "number":
      case "integer": {
        const i = el("input", { id, type: "number", step: f.kind === "integer" ? "1" : "any", required: f.required,
          min: f.minimum, max: f.maximum });
        if (typeof d === "number") i.value = String(d);
        return i;
      }
      case "choice": {
        const i = el("select", { id, required: f.required }, f.required && d !== undefined ? null : el("option", { value: "" }, "—"),
          (f.options || []).map((o) => el("option", { value: o.value }, o.title || o.value)));
        if (typeof d === "string") i.value = d;
        return i;
      }
      case "multi": {
        const box = el("div", { id, class: "multi", role: "group" });
        for (const o of f.options || []) {
          const cb = el("input", { type: "checkbox", value: o.value, id: id + "-" + o.value });
          cb.checked = Array.isArray(d) && d.includes(o.value);
          box.append(el("label", { for: cb.id }, cb, " " + (o.title || o.value)));
        }
        return box;
      }
      default: {
        const type = f.secret ? "password" : ({ email: "email", uri: "url", date: "date" })[f.format] || "text";
        const i = el("input", { id, type, required: f.required, minlength: f.minLength, maxlength: f.maxLength,
          autocomplete: f.secret ? "new-password" : "off" });
        if (typeof d === "string") i.value = d;
        return i;
      }
    }
  }

  // fieldValue reads one field; undefined leaves it out of the answer.
  function fieldValue(input, f) {
    switch (f.kind) {
      case "boolean": return input.checked;
      case "number":
      case "integer": return input.value === "" ? undefined : Number(input.value);
      case "multi": {
        const vals = [...input.querySelectorAll("input:checked")].map((c) => c.value);
        return vals.length || f.required ? vals : undefined;
      }
      default: return input.value === "" && !f.required ? undefined : input.value;
    }
  }

  function questionCard(ev) {
    const card = el("article", { class: "question", dataset: { question: ev.id, server: ev.server, mode: ev.mode } });
    card._question = ev;
    const note = el("div", { class: "out", "aria-live": "polite" });
    const answer = async (action, content) => {
      for (const b of card.querySelectorAll("button")) b.disabled = true;
      try {
        await call("console/answer", { id: ev.id, action, content });
      } catch (e) {
        note.replaceChildren(el("p", { class: "error", role: "alert" }, e.message));
        for (const b of card.querySelectorAll("button")) b.disabled = false;
      }
    };
    const other = [
      el("button", { type: "button", dataset: { answer: "decline" }, onclick: () => answer("decline") }, "Decline"),
      el("button", { type: "button", class: "ghost", dataset: { answer: "cancel" }, onclick: () => answer("cancel") }, "Cancel"),
    ];
    card.append(el("h3", {}, ev.server + " asks"), ev.message ? el("p", { class: "desc" }, ev.message) : null);
    if (ev.mode === "url") {
      let host = ev.url;
      try { host = new URL(ev.url).host; } catch (_) { /* shown as is */ }
      card.append(
        el("p", {}, "It asks you to visit ", el("a", { href: ev.url, target: "_blank", rel: "noopener noreferrer", class: "mono" }, ev.url),
          " (", el("strong", {}, host), ")."),
        el("div", { class: "actions" },
          el("button", { type: "button", class: "primary", dataset: { answer: "accept" },
            onclick: () => { window.open(ev.url, "_blank", "noopener,noreferrer"); answer("accept"); } }, "Open and accept"),
          other),
        note);
      return card;
    }
    const form = el("form", { class: "call" });
    const inputs = [];
    for (const f of ev.fields || []) {
      const id = "elicit-" + ev.id + "-" + f.name;
      const input = fieldInput(id, f);
      inputs.push({ f, input });
      const limits = [];
      if (f.minLength !== undefined || f.maxLength !== undefined) limits.push((f.minLength || 0) + "–" + (f.maxLength !== undefined ? f.maxLength : "∞") + " characters");
      if (f.minimum !== undefined || f.maximum !== undefined) limits.push((f.minimum !== undefined ? f.minimum : "−∞") + " to " + (f.maximum !== undefined ? f.maximum : "∞"));
      form.append(el(f.kind === "multi" ? "div" : "label", f.kind === "multi" ? { class: "field" } : { for: id },
        el("span", {}, f.title || f.name, f.required ? el("span", { class: "req" }, "required") : null,
          " ", el("span", { class: "hint" }, f.kind + (f.format ? " (" + f.format + ")" : "") + (f.secret ? " · secret, not shown" : "") + (limits.length ? " · " + limits.join(", ") : ""))),
        f.description ? el("span", { class: "hint" }, f.description) : null,
        input));
    }
    form.append(el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", dataset: { answer: "accept" } }, "Accept"), other), note);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const content = {};
      for (const { f, input } of inputs) {
        const v = fieldValue(input, f);
        if (v !== undefined) content[f.name] = v;
      }
      answer("accept", content);
    });
    card.append(form);
    return card;
  }

  // ---- the servers table ------------------------------------------------------------

  const COLS = 9;

  function since(iso) {
    if (!iso) return "";
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (s < 60) return "for " + s + "s";
    if (s < 3600) return "for " + Math.floor(s / 60) + "m " + (s % 60) + "s";
    return "for " + Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  }

  function badge(status) {
    return el("span", { class: "badge", dataset: { s: status } }, status);
  }

  function actionButtons(v) {
    const name = v.name;
    const busy = state.busy.get(name);
    const box = el("div", { class: "actions" });
    if (v.unmanaged) {
      box.append(el("span", { class: "tag", title: "A row of the profile: restart the host to restart it" }, "profile row"));
      return box;
    }
    const btn = (action, label, fn, extra) => el("button", Object.assign({
      type: "button", dataset: { action }, disabled: !!busy || v.removed,
      "aria-label": label + " " + name, onclick: fn,
    }, extra || {}), busy === action ? label + "…" : label);
    if (v.status === "needs-auth" && has("mcpManager/login")) {
      box.append(btn("login", "Log in", () => login(name), { class: "primary" }));
    }
    box.append(btn("restart", "Restart", () => restart(name), { disabled: !!busy || v.removed || !v.enabled }));
    box.append(btn("probe", "Probe", () => probe(name)));
    if (v.source === "settings" && has("mcpManager/setEnabled")) {
      box.append(v.enabled
        ? btn("disable", "Disable", () => setEnabled(name, false))
        : btn("enable", "Enable", () => setEnabled(name, true)));
    }
    return box;
  }

  function serverCells(v) {
    const info = v.serverInfo ? v.serverInfo.name + (v.serverInfo.version ? " " + v.serverInfo.version : "") : "";
    const attempts = v.maxAttempts ? v.attempt + " / " + v.maxAttempts : (v.attempt ? String(v.attempt) : "");
    const source = v.unmanaged ? "profile" : v.layer || (v.source + (v.owner ? " (" + v.owner + ")" : ""));
    return [
      el("td", { class: "name" },
        el("button", { type: "button", class: "link", dataset: { action: "select" },
          "aria-label": "Show the detail of " + v.name, onclick: () => select(v.name) }, v.name),
        v.removed ? el("span", { class: "tag" }, " removed") : null),
      el("td", {}, source),
      el("td", {}, v.transport || ""),
      el("td", { class: "status" }, badge(v.status),
        el("span", { class: "since", dataset: { since: v.since || "" } }, since(v.since))),
      el("td", { class: "num" }, attempts),
      el("td", { class: "num" }, String((v.tools || []).length)),
      el("td", { class: "mono" }, v.protocolVersion || ""),
      el("td", {}, info),
      el("td", {}, actionButtons(v)),
    ];
  }

  function probeView(name) {
    const p = state.probes.get(name);
    if (!p) return null;
    if (p.busy) return el("div", { class: "probe", role: "status" }, "Probing " + name + "…");
    if (p.error) return el("div", { class: "probe error", role: "alert" }, "Probe failed: " + p.error);
    const r = p.result;
    const stages = ["resolve", "connect", "authorize", "initialize", "list-tools"];
    const t = r.timings || {};
    const dur = { connect: t.connectNs, initialize: t.initializeNs, "list-tools": t.listToolsNs, resolve: r.resolveNs };
    const failedAt = r.stage === "ok" ? -1 : stages.indexOf(r.stage);
    const list = el("ol", { class: "stages", "aria-label": "Probe stages" });
    stages.forEach((s, i) => {
      if (s === "authorize" && failedAt !== i) return; // only shown when it is where it failed
      const cls = failedAt === i ? "fail" : (failedAt >= 0 && i > failedAt ? "skip" : "");
      const ms = dur[s] ? " " + ms3(dur[s]) : "";
      list.append(el("li", { class: cls }, (cls === "fail" ? "✕ " : cls === "skip" ? "– " : "✓ ") + s + ms));
    });
    const tools = (r.tools || []).map((x) => x.name);
    return el("div", { class: "probe", dataset: { probe: name, stage: r.stage } },
      el("div", {}, el("strong", { class: r.stage === "ok" ? "ok-text" : "bad-text" },
        r.stage === "ok" ? "Probe OK" : "Probe failed at " + r.stage),
        " · total " + ms3(t.totalNs || 0),
        r.serverName ? " · " + r.serverName + (r.serverVersion ? " " + r.serverVersion : "") : "",
        r.protocolVersion ? " · protocol " + r.protocolVersion : "",
        r.cancelled ? " · cancelled" : "",
        " ", el("button", { type: "button", class: "ghost", onclick: () => { state.probes.delete(name); renderServer(name); } }, "Dismiss")),
      list,
      r.error ? el("pre", { class: "error" }, r.error) : null,
      tools.length ? el("div", {}, el("span", { class: "tag" }, tools.length + " tools: "), el("span", { class: "mono" }, tools.join(", ") + (r.toolsTruncated ? " …" : ""))) : null,
      r.stderrTail ? el("details", {}, el("summary", {}, "stderr tail"), el("pre", {}, r.stderrTail)) : null,
      r.cleanup && r.cleanup.outcome !== "closed" ? el("div", { class: "bad-text" }, "cleanup: " + r.cleanup.outcome + " " + (r.cleanup.error || "")) : null);
  }

  function ms3(ns) {
    const ms = ns / 1e6;
    return (ms < 10 ? ms.toFixed(1) : Math.round(ms)) + " ms";
  }

  function extraCell(v) {
    const parts = [];
    if (v.error) parts.push(el("pre", { class: "error", dataset: { error: v.name } }, v.error));
    const note = state.notes.get(v.name);
    if (note) parts.push(el("div", { class: "error", role: "alert" }, note));
    const p = probeView(v.name);
    if (p) parts.push(p);
    return parts;
  }

  const rows = new Map(); // name → {tr, extra, sig}

  function view(name) {
    return state.servers.get(name) || state.unmanaged.get(name);
  }

  function signature(v) {
    return JSON.stringify([v, state.busy.get(v.name) || "", state.notes.get(v.name) || "",
      state.probes.get(v.name) || null, state.selected === v.name, [...state.methods].length]);
  }

  // renderServer brings one server's rows up to date, keeping focus on the button it was on.
  function renderServer(name) {
    const v = view(name);
    let r = rows.get(name);
    if (!v) {
      if (r) { r.tr.remove(); r.extra.remove(); rows.delete(name); }
      return;
    }
    const sig = signature(v);
    if (r && r.sig === sig) return;
    if (!r) {
      r = { tr: el("tr", { class: "server" }), extra: el("tr", { class: "extra" }) };
      r.tr.dataset.name = name;
      r.extra.dataset.for = name;
      rows.set(name, r);
    }
    const focused = r.tr.contains(document.activeElement) ? document.activeElement.dataset.action : null;
    r.sig = sig;
    r.tr.dataset.status = v.status;
    r.tr.classList.toggle("selected", state.selected === name);
    r.tr.replaceChildren(...serverCells(v));
    const extra = extraCell(v);
    r.extra.replaceChildren(...(extra.length ? [el("td", { colspan: COLS }, extra)] : []));
    r.extra.hidden = extra.length === 0;
    if (focused) {
      const b = r.tr.querySelector(`[data-action="${focused}"]`);
      if (b && !b.disabled) b.focus();
    }
  }

  function renderAll() {
    const body = $("#servers tbody");
    const names = [...state.servers.keys(), ...[...state.unmanaged.keys()].filter((n) => !state.servers.has(n))];
    for (const n of [...rows.keys()]) if (!view(n)) renderServer(n);
    names.forEach((n) => renderServer(n));
    // Put the rows in order, moving only those out of place.
    let at = body.firstChild;
    for (const n of names) {
      const r = rows.get(n);
      for (const tr of [r.tr, r.extra]) {
        if (at === tr) at = at.nextSibling;
        else body.insertBefore(tr, at);
      }
    }
    if (!names.length && !body.querySelector(".empty")) {
      body.append(el("tr", { class: "empty" }, el("td", { colspan: COLS, class: "muted" }, "No MCP servers are configured.")));
    } else if (names.length) {
      body.querySelectorAll(".empty").forEach((e) => e.remove());
    }
    const all = names.map(view);
    const count = (s) => all.filter((v) => v.status === s).length;
    const asleep = count("lazy") + count("idle");
    $("#counts").textContent = all.length + " servers · " + count("connected") + " connected" +
      (asleep ? " · " + asleep + " not running (lazy)" : "") +
      (count("failed") ? " · " + count("failed") + " failed" : "");
    if (state.selected) renderDetailHead();
  }

  // ---- the watch streams ------------------------------------------------------------

  function onSnapshot(snap, recv) {
    const prev = state.servers;
    const next = new Map();
    const changed = [];
    for (const v of snap.servers || []) {
      next.set(v.name, v);
      const old = prev.get(v.name);
      if (!old) {
        if (prev.size || perf.snapshots.length) activity(v.name + ": " + v.status);
        changed.push(v);
      } else if (old.status !== v.status) {
        activity(v.name + ": " + old.status + " → " + v.status + (v.error ? " (" + v.error + ")" : ""),
          v.status === "failed" ? "bad" : "");
        changed.push(v);
      }
    }
    for (const n of prev.keys()) if (!next.has(n)) activity(n + ": removed");
    state.servers = next;
    const s = snap.settings || {};
    $("#settings").textContent = s.file
      ? "settings: " + s.file + (s.projectFile ? " + project: " + s.projectFile : "") +
        (s.missing ? " (missing)" : "") + (s.error ? " — rejected: " + s.error : "")
      : "no settings file";
    $("#settings").title = $("#settings").textContent;
    renderAll();
    afterPaint((painted) => {
      perf.snapshots.push({ version: snap.version, recv, painted, servers: next.size });
      for (const v of changed) perf.changes.push({ name: v.name, status: v.status, recv, painted });
    });
  }

  function afterPaint(fn) {
    requestAnimationFrame(() => setTimeout(() => fn(performance.now()), 0));
  }

  // Every live view rides one event stream per tab, GET /v1/mux: browsers allow six
  // connections per host on HTTP/1.1, and a page holding one per view could not send the
  // request that answers a question. stream() opens a method on it (POST
  // /v1/mux/{id}/open); after a reconnect (a new mux id) the open ones are opened again,
  // except one-shot streams (a login), which fail instead.
  const mux = { id: "", subs: new Map(), seq: 0, lost: false };

  function muxConnect() {
    const es = new EventSource("/v1/mux");
    const subOf = (e) => { try { const d = JSON.parse(e.data); return [d, mux.subs.get(d.sub)]; } catch (_) { return [{}, undefined]; } };
    es.addEventListener("mux", (e) => {
      mux.id = JSON.parse(e.data).id;
      setConn("live", "live");
      if (mux.lost) {
        mux.lost = false;
        $("#app").classList.remove("stale");
        activity("the host is back");
      }
      for (const [sub, s] of mux.subs) {
        if (s.opened && s.once) { mux.subs.delete(sub); s.onError(new APIError("cancelled", "the connection to the host was lost")); continue; }
        muxOpen(sub, s);
      }
    });
    es.onmessage = (e) => {
      const recv = performance.now();
      const [d, s] = subOf(e);
      if (!s) return;
      try { s.onValue(d.value, recv); } catch (err) { console.error(s.method, err); }
    };
    es.addEventListener("end", (e) => {
      const [d, s] = subOf(e);
      if (s) { mux.subs.delete(d.sub); s.onEnd(); }
    });
    es.addEventListener("error", (e) => {
      if (e.data) { // one stream's own error event
        const [d, s] = subOf(e);
        if (s) { mux.subs.delete(d.sub); s.onError(new APIError(d.error.code, d.error.message)); }
        return;
      }
      mux.id = "";
      hostLost();
      if (es.readyState === EventSource.CLOSED) {
        setConn("down", "disconnected");
        checkSession();
      } else {
        setConn("connecting", "reconnecting…");
      }
    });
  }

  // hostLost greys the page out and says so once, however many times the browser retries.
  function hostLost() {
    if (mux.lost) return;
    mux.lost = true;
    $("#app").classList.add("stale");
    activity("lost the connection to the host (stopped?): the page shows its last known state and reconnects when it is back", "bad");
  }

  async function muxOpen(sub, s) {
    const id = mux.id;
    if (!id) return; // opened when the mux (re)connects
    s.opened = true;
    try {
      await post("/v1/mux/" + id + "/open", { sub, method: s.method, params: s.params });
    } catch (e) {
      if (mux.id === id && mux.subs.delete(sub)) s.onError(e);
    }
  }

  // stream follows a stream method: onValue gets each value; opts may set params, once (a
  // one-shot stream), onEnd and onError (default: a line in the Activity list).
  function stream(method, onValue, opts) {
    const sub = "s" + (++mux.seq);
    const s = Object.assign({
      method, onValue, params: null, once: false, opened: false, onEnd() {},
      onError(e) { activity(method + ": " + e.message, "bad"); },
    }, opts || {});
    mux.subs.set(sub, s);
    muxOpen(sub, s);
    return {
      close() {
        if (mux.subs.delete(sub) && mux.id) post("/v1/mux/" + mux.id + "/close", { sub }).catch(() => {});
      },
    };
  }

  // ---- the gateway's downstream sessions (gateway/sessions) --------------------------

  function clock(iso) {
    if (!iso) return "";
    return new Date(iso).toLocaleTimeString([], { hour12: false });
  }

  function callText(c) {
    return c.method + (c.target ? " " + c.target : "");
  }

  // The sessions whose recent calls the user folded (open ones) or unfolded (ended ones).
  const gwFolded = new Set(), gwOpen = new Set();

  function onGatewaySessions(snap) {
    const list = (snap && snap.sessions) || [];
    const open = list.filter((s) => !s.ended);
    $("#gateway").hidden = false;
    $("#gateway-counts").textContent = open.length + (open.length === 1 ? " session" : " sessions") +
      (list.length > open.length ? " · " + (list.length - open.length) + " ended" : "");
    const body = $("#gateway-sessions tbody");
    if (!list.length) {
      body.replaceChildren(el("tr", { class: "empty" }, el("td", { colspan: 7, class: "muted" }, "No client has connected to the gateway yet.")));
      return;
    }
    const rows = [];
    for (const s of list) {
      const client = (s.client || "(no clientInfo)") + (s.clientVersion ? " " + s.clientVersion : "");
      rows.push(el("tr", { class: "gw-session" + (s.ended ? " ended" : ""), dataset: { session: String(s.id), client: s.client || "", route: s.route } },
        el("td", { class: "num" }, String(s.id)),
        el("td", {}, client, s.protocolVersion ? el("div", { class: "tag mono" }, "protocol " + s.protocolVersion) : null),
        el("td", { class: "mono" }, s.route),
        el("td", {}, clock(s.started), el("div", { class: "since muted", dataset: { since: s.ended ? "" : s.started } }, s.ended ? "ended " + clock(s.ended) : since(s.started))),
        el("td", {}, clock(s.lastActive)),
        el("td", { class: "num" }, String(s.requests || 0)),
        el("td", {}, (s.inFlight || []).length
          ? el("ul", { class: "gw-inflight" }, s.inFlight.map((c) => el("li", { dataset: { method: c.method, target: c.target || "" } },
            el("span", { class: "mono" }, callText(c)), " ", el("span", { class: "muted", dataset: { started: c.started } }, "since " + clock(c.started)))))
          : el("span", { class: "muted" }, "—"))));
      const recent = s.recent || [];
      if (recent.length) {
        rows.push(el("tr", { class: "gw-calls" + (s.ended ? " ended" : ""), dataset: { for: String(s.id) } },
          el("td", {}), el("td", { colspan: 6 },
            el("details", { open: gwOpen.has(s.id) || (!s.ended && !gwFolded.has(s.id)) },
              el("summary", { onclick: (e) => { // the user's fold, kept across snapshots
                const opening = !e.currentTarget.parentElement.open;
                (opening ? gwFolded : gwOpen).delete(s.id);
                (opening ? gwOpen : gwFolded).add(s.id);
              } }, "Recent calls (" + recent.length + ")"),
              el("table", { class: "gw-recent" },
                el("tbody", {}, recent.map((c) => el("tr", { dataset: { method: c.method, target: c.target || "", status: c.status } },
                  el("td", { class: "mono" }, clock(c.started)),
                  el("td", { class: "mono" }, c.method),
                  el("td", { class: "mono" }, c.target || ""),
                  el("td", {}, el("span", { class: "badge", dataset: { s: c.status === "ok" ? "connected" : c.status === "cancelled" ? "disabled" : "failed" } }, c.status)),
                  el("td", { class: "num" }, (c.durationMs || 0) + " ms")))))))));
      }
    }
    body.replaceChildren(...rows);
  }

  async function checkSession() {
    try { await call("mcpManager/list"); } catch (_) { /* signedOut() on 401 */ }
  }

  function onClients(list) {
    const next = new Map();
    for (const c of list || []) next.set(c.name, Object.assign({ unmanaged: true }, c));
    for (const [n, c] of next) {
      const old = state.unmanaged.get(n);
      if (old && old.status !== c.status) activity(n + ": " + old.status + " → " + c.status);
    }
    state.unmanaged = next;
    renderAll();
  }

  // ---- actions ----------------------------------------------------------------------

  async function act(name, action, fn) {
    state.busy.set(name, action);
    state.notes.delete(name);
    renderServer(name);
    try {
      return await fn();
    } catch (e) {
      state.notes.set(name, action + " failed: " + e.message);
      activity(name + ": " + action + " failed: " + e.message, "bad");
      return undefined;
    } finally {
      state.busy.delete(name);
      renderServer(name);
    }
  }

  async function restart(name) {
    activity(name + ": restart requested");
    await act(name, "restart", () => call("mcpManager/restart", { name }));
  }

  async function probe(name) {
    state.probes.set(name, { busy: true });
    const r = await act(name, "probe", async () => {
      try {
        const result = await call("mcpManager/probe", { name });
        state.probes.set(name, { result });
        activity(name + ": probe " + (result.stage === "ok" ? "ok" : "failed at " + result.stage));
        return result;
      } catch (e) {
        state.probes.set(name, { error: e.message });
        throw e;
      }
    });
    return r;
  }

  async function setEnabled(name, enabled) {
    await act(name, enabled ? "enable" : "disable", async () => {
      await call("mcpManager/setEnabled", { name, enabled });
      activity(name + ": " + (enabled ? "enabled" : "disabled") + " in the settings file");
    });
  }

  // login follows mcpManager/login, a stream whose first value carries the authorization
  // URL, opened in a new tab; the status goes to connected through the watch stream.
  function login(name) {
    state.busy.set(name, "login");
    renderServer(name);
    let st = null;
    const done = (msg, bad) => {
      if (st) st.close();
      state.busy.delete(name);
      if (bad) state.notes.set(name, msg); // shown at the row's buttons
      if (msg) activity(name + ": " + msg, bad ? "bad" : "");
      renderServer(name);
    };
    state.notes.delete(name);
    st = stream("mcpManager/login", (v) => {
      v = v || {};
      const url = v.url || v.authorizationURL || v.authURL;
      if (url && /^https?:\/\//.test(url)) {
        activity(name + ": log in in the new tab");
        window.open(url, "_blank", "noopener");
      }
      if (v.done || v.status === "done") done("logged in");
    }, {
      params: { name, noBrowser: true }, once: true,
      onEnd() { done("login finished"); },
      onError(e) { done("login failed: " + e.message, true); },
    });
  }

  // ---- server detail ----------------------------------------------------------------

  function select(name) {
    const was = state.selected;
    state.selected = name;
    if (was) renderServer(was);
    renderServer(name);
    $("#detail").hidden = false;
    renderDetailHead();
    renderTab();
    $("#detail-h").scrollIntoView({ block: "nearest" });
  }

  function renderDetailHead() {
    const v = view(state.selected);
    const h = $("#detail-h");
    h.replaceChildren(state.selected + " ", v ? badge(v.status) : el("span", { class: "tag" }, "gone"));
  }

  function showTab(tab) {
    state.tab = tab;
    for (const b of document.querySelectorAll(".tabs [role=tab]")) {
      const on = b.id === "tab-" + tab;
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.tabIndex = on ? 0 : -1;
      $("#" + b.getAttribute("aria-controls")).hidden = !on;
    }
    renderTab();
  }

  // renderTab draws the selected server's open tab. The tabs that ask the host draw its
  // answer only while current() holds (claim): no later render of the same tab (another
  // server chosen, a re-listing) has begun since, so a slow answer, or a slow failure,
  // never lands on what the person looks at now.
  function renderTab() {
    const name = state.selected;
    if (!name) return;
    const pane = $("#pane-" + state.tab);
    const v = view(name) || {};
    const current = claim(pane);
    switch (state.tab) {
      case "tools": renderTools(pane, name, v, current); break;
      case "resources": renderResources(pane, name, current); break;
      case "prompts": renderPrompts(pane, name, current); break;
      case "info": renderInfo(pane, name, v); break; // its late answer lands in a node of its own
      case "stderr":
        pane.replaceChildren(v.stderrTail ? el("pre", { class: "mono" }, v.stderrTail)
          : el("p", { class: "muted" }, v.transport === "stdio" ? "Nothing on stderr yet." : "Only stdio servers have a stderr."));
        break;
    }
  }

  // load shows that what is loading in pane while ask() is asked, and returns its answer
  // while current() holds (claim). It returns undefined when a later render began, and when
  // ask failed, its failure drawn in pane while current (prefixed with failure; a method the
  // host does not serve is a muted note, not an error).
  async function load(pane, current, what, ask, failure = "") {
    pane.replaceChildren(el("p", { class: "muted" }, "Loading " + what + "…"));
    try {
      const answer = await ask();
      return current() ? answer : undefined;
    } catch (e) {
      if (current()) pane.replaceChildren(el("p", { class: e.code === "unavailable" ? "muted" : "error" }, failure + e.message));
    }
  }

  async function renderTools(pane, name, v, current) {
    if (!has("console/tools")) {
      pane.replaceChildren(el("p", { class: "muted" }, "Tools: " + ((v.tools || []).join(", ") || "none")));
      return;
    }
    const tools = await load(pane, current, "tools", () => call("console/tools", { server: name }), "Could not list the tools: ");
    if (tools === undefined) return;
    if (!tools.length) {
      pane.replaceChildren(el("p", { class: "muted" }, "This server has no registered tools" + (v.status !== "connected" ? " (it is " + v.status + ")." : ".")));
      return;
    }
    pane.replaceChildren(toolFilter(pane, tools), ...tools.map((t) => toolCard(t)));
    applyToolFilter(pane);
  }

  // toolFilter is the text box over a server's tool list: every word typed must occur in
  // the tool's name, title or description (case-insensitive). The text is kept per server
  // while the page is open, so a re-listing (list_changed) keeps the narrowed list.
  function toolFilter(pane, tools) {
    const server = state.selected;
    const input = el("input", { type: "search", id: "tool-filter", placeholder: "Filter " + tools.length + " tools by name, title or description",
      "aria-label": "Filter the tools", autocomplete: "off", spellcheck: "false" });
    input.value = state.toolFilter.get(server) || "";
    const count = el("span", { id: "tool-filter-count", class: "muted", role: "status" });
    input.addEventListener("input", () => {
      state.toolFilter.set(server, input.value);
      applyToolFilter(pane);
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && input.value) { input.value = ""; input.dispatchEvent(new Event("input")); }
    });
    return el("div", { class: "tool-filter" }, input, count);
  }

  function applyToolFilter(pane) {
    const input = pane.querySelector("#tool-filter");
    if (!input) return;
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0, all = 0;
    for (const card of pane.querySelectorAll("article.tool")) {
      all++;
      const hay = card.dataset.search || "";
      const on = words.every((w) => hay.includes(w));
      card.hidden = !on;
      if (on) shown++;
    }
    pane.querySelector("#tool-filter-count").textContent = words.length ? shown + " of " + all + " tools" : all + " tools";
    let none = pane.querySelector(".tool-filter-none");
    if (!shown && all) {
      if (!none) pane.append(none = el("p", { class: "muted tool-filter-none" }, ""));
      none.textContent = "No tool matches \u201c" + input.value + "\u201d.";
    } else if (none) {
      none.remove();
    }
  }

  function typeOf(s) {
    if (!s || typeof s !== "object") return "any";
    if (Array.isArray(s.type)) return s.type.join(" | ");
    if (s.type === "array") return "array of " + typeOf(s.items);
    if (s.type) return s.type;
    if (s.enum) return "enum";
    if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf).map(typeOf).join(" | ");
    return "any";
  }

  function schemaTable(schema) {
    const props = (schema && schema.properties) || {};
    const req = new Set((schema && schema.required) || []);
    const names = Object.keys(props);
    if (!names.length) return el("p", { class: "muted" }, "No parameters.");
    return el("table", { class: "schema" },
      el("thead", {}, el("tr", {}, el("th", {}, "Parameter"), el("th", {}, "Type"), el("th", {}, "Description"))),
      el("tbody", {}, names.map((n) => {
        const p = props[n] || {};
        const extra = [];
        if (p.enum) extra.push("one of " + p.enum.map((x) => JSON.stringify(x)).join(", "));
        if (p.default !== undefined) extra.push("default " + JSON.stringify(p.default));
        if (p.minimum !== undefined) extra.push("≥ " + p.minimum);
        if (p.maximum !== undefined) extra.push("≤ " + p.maximum);
        return el("tr", {},
          el("td", {}, n, req.has(n) ? el("span", { class: "req", title: "required" }, "required") : null),
          el("td", { class: "mono" }, typeOf(p)),
          el("td", {}, p.description || "", extra.length ? el("div", { class: "tag" }, extra.join(" · ")) : null));
      })));
  }

  // cardHead is the head of a tool's or prompt's card: its name (and title), and the button
  // (data-action action, labelled label) that shows and hides its form, focusing the form's
  // first field matching focus when shown.
  function cardHead(name, title, form, action, label, focus) {
    return el("div", { class: "tool-head" },
      el("h3", { class: "mono" }, name, title ? el("span", { class: "tag" }, " · " + title) : null),
      el("button", { type: "button", dataset: { action }, "aria-expanded": "false",
        onclick: (e) => {
          form.hidden = !form.hidden;
          e.target.setAttribute("aria-expanded", String(!form.hidden));
          if (!form.hidden) { const f = form.querySelector(focus); if (f) f.focus(); }
        } }, label));
  }

  function toolCard(t) {
    const schema = t.parameters || {};
    const card = el("article", { class: "tool", dataset: { tool: t.name,
      search: [t.name, t.mcpTool, t.title, t.description].filter(Boolean).join("\n").toLowerCase() } });
    const form = callForm(t, schema);
    form.hidden = true;
    card.append(...[
      cardHead(t.name, t.title, form, "open-call", "Call…", "input, select, textarea"),
      t.ui ? el("p", { class: "tag", dataset: { view: t.ui.resourceUri } }, "Interactive view (" + t.ui.resourceUri + ")" +
        ((t.ui.visibility || []).includes("model") ? "" : " · called by its view only")) : null,
      t.description ? el("p", { class: "desc" }, t.description) : null,
      schemaTable(schema),
      el("details", {}, el("summary", {}, "Input schema (JSON)"), el("pre", {}, JSON.stringify(schema, null, 2))),
      t.outputSchema ? el("details", {}, el("summary", {}, "Output schema (JSON)"), el("pre", {}, JSON.stringify(t.outputSchema, null, 2))) : null,
      form].filter(Boolean));
    return card;
  }

  // callForm builds a form from the tool's input schema: one field per top-level property
  // (text, number, checkbox, select; JSON for objects and arrays), or raw JSON arguments.
  function callForm(t, schema) {
    const props = schema.properties || {};
    const req = new Set(schema.required || []);
    const fields = [];
    const form = el("form", { class: "call", dataset: { call: t.name } });
    for (const [n, p] of Object.entries(props)) {
      const id = "arg-" + t.name + "-" + n;
      let input;
      const ty = Array.isArray(p.type) ? p.type[0] : p.type;
      if (p.enum) {
        input = el("select", { id, name: n }, req.has(n) ? null : el("option", { value: "" }, "—"),
          p.enum.map((x) => el("option", { value: JSON.stringify(x) }, String(x))));
      } else if (ty === "boolean") {
        input = el("input", { id, name: n, type: "checkbox" });
      } else if (ty === "number" || ty === "integer") {
        input = el("input", { id, name: n, type: "number", step: ty === "integer" ? "1" : "any", required: req.has(n) });
      } else if (ty === "object" || ty === "array" || !ty) {
        input = el("textarea", { id, name: n, placeholder: ty === "array" ? "[ ]" : "JSON", required: req.has(n) });
      } else {
        input = el("input", { id, name: n, type: "text", required: req.has(n) });
      }
      if (p.default !== undefined) {
        if (ty === "boolean") input.checked = !!p.default;
        else if (!p.enum) input.value = typeof p.default === "string" ? p.default : JSON.stringify(p.default);
      }
      fields.push({ n, p, ty, input });
      form.append(el("label", { for: id }, el("span", {}, n, req.has(n) ? el("span", { class: "req" }, "required") : null,
        " ", el("span", { class: "hint" }, typeOf(p))), input));
    }
    const rawArea = el("textarea", { name: "__raw", "aria-label": "Arguments as JSON", placeholder: "{ }" });
    const raw = el("details", {}, el("summary", {}, "Arguments as JSON (replaces the fields)"), rawArea);
    const out = el("div", { class: "out", "aria-live": "polite" });
    const submit = el("button", { type: "submit", class: "primary" }, "Call " + t.name);
    form.append(raw, el("div", {}, submit), out);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      let args = {};
      try {
        if (rawArea.value.trim()) {
          args = JSON.parse(rawArea.value);
        } else {
          for (const f of fields) {
            const val = f.input.type === "checkbox" ? f.input.checked : f.input.value;
            if (f.input.type !== "checkbox" && val === "") continue;
            if (f.p.enum) args[f.n] = JSON.parse(val);
            else if (f.ty === "number" || f.ty === "integer") args[f.n] = Number(val);
            else if (f.ty === "object" || f.ty === "array" || !f.ty) args[f.n] = JSON.parse(val);
            else args[f.n] = val;
          }
        }
      } catch (err) {
        out.replaceChildren(el("p", { class: "error", role: "alert" }, "Arguments are not valid JSON: " + err.message));
        return;
      }
      submit.disabled = true;
      const pending = el("p", { class: "muted", role: "status" }, "Calling…");
      if (form.view) form.view.teardown("the tool was called again");
      // A tool with a view shows it while the call runs: the input now, the result after.
      const view = form.view = t.ui && apps.sandbox ? appView(t, {
        callTool: (tool, a) => call("console/callTool", { tool: tool.name, args: a }),
        message: (p) => { activity(t.server + "'s view says: " + ((p.content || []).map((c) => c.text || "").join(" ") || "(no text)")); },
      }) : null;
      out.replaceChildren(pending, view ? view.node : null);
      if (view) { view.start(); view.input(args); }
      const started = performance.now();
      activity("call " + t.name + " started");
      try {
        const ref = "call-" + (++callSeq);
        form.dataset.ref = ref;
        const r = await call("console/callTool", { tool: t.name, args, ref });
        pending.replaceWith(resultView(r, performance.now() - started));
        if (view) view.result(mcpResult(r));
        activity("call " + t.name + (r.isError ? " failed" : " done"), r.isError ? "bad" : "");
      } catch (err) {
        pending.replaceWith(el("p", { class: "error", role: "alert" }, err.message));
        if (view) view.cancelled(err.message);
        activity("call " + t.name + " failed: " + err.message, "bad");
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  function resultView(r, ms) {
    const blocks = (r.content || []).map((c) => {
      if (c.type === "image" && c.dataURL) return el("img", { src: c.dataURL, alt: "image result (" + (c.mediaType || "") + ")" });
      if (c.type === "json") return el("pre", {}, JSON.stringify(c.json, null, 2));
      return el("pre", {}, c.text || "");
    });
    return el("div", { class: "result" + (r.isError ? " is-error" : ""), dataset: { result: r.isError ? "error" : "ok" } },
      el("div", { class: "tag" }, (r.isError ? "error" + (r.code ? " (" + r.code + ")" : "") : "ok") + " · " + Math.round(ms) + " ms"),
      blocks,
      r.structured !== undefined && r.structured !== null
        ? el("details", { open: true }, el("summary", {}, "Structured content"), el("pre", {}, JSON.stringify(r.structured, null, 2))) : null);
  }

  // renderResources lists the server's resources (list_mcp_resources), each to read or to
  // subscribe to (console/subscribe: every update shown live, the resource read again),
  // and its resource templates (list_mcp_resource_templates), each with a form of its URI
  // variables that reads the expanded URI.
  async function renderResources(pane, name, current) {
    if (!has("console/callTool")) {
      pane.replaceChildren(el("p", { class: "muted" }, "Resources need the console service (console/*) in the profile."));
      return;
    }
    const both = await load(pane, current, "resources", () => Promise.all([
      call("console/callTool", { tool: "list_mcp_resources", args: { server: name } }),
      call("console/callTool", { tool: "list_mcp_resource_templates", args: { server: name } }).catch(() => null),
    ]));
    if (both === undefined) return;
    const [r, rt] = both;
    if (r.isError) {
      pane.replaceChildren(el("p", { class: "muted" }, (r.content || []).map((c) => c.text).join("\n")));
      return;
    }
    const list = (r.structured && r.structured.resources) || [];
    const templates = (rt && !rt.isError && rt.structured && rt.structured.resourceTemplates) || [];
    const out = el("div", { class: "out", id: "resource-out", "aria-live": "polite" });
    const parts = [];
    if (!list.length && !templates.length) {
      pane.replaceChildren(el("p", { class: "muted" }, "This server lists no resources."), subscriptionsView(name));
      return;
    }
    parts.push(list.length ? el("table", { class: "resources" },
      el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "URI"), el("th", {}, "Type"), el("th", {}, ""))),
      el("tbody", {}, list.map((res) => el("tr", { dataset: { uri: res.uri } },
        el("td", {}, res.title || res.name || ""),
        el("td", { class: "mono" }, res.uri),
        el("td", {}, res.mimeType || ""),
        el("td", { class: "actions" },
          el("button", { type: "button", dataset: { action: "read" }, onclick: () => readResource(name, res.uri, out) }, "Read"),
          has("console/subscribe") ? subscribeButton(name, res.uri) : null)))))
      : el("p", { class: "muted" }, "This server lists no resources."));
    if (templates.length) {
      parts.push(el("h3", {}, "Resource templates"), ...templates.map((tp) => templateCard(name, tp, out)));
    }
    pane.replaceChildren(...parts, subscriptionsView(name), out);
  }

  // ---- resource templates (RFC 6570) ------------------------------------------------

  // uriVars lists the variables of an RFC 6570 template, in order, each once.
  function uriVars(template) {
    const names = [];
    for (const m of template.matchAll(/\{([^}]*)\}/g)) {
      for (let v of m[1].replace(/^[+#./;?&]/, "").split(",")) {
        v = v.replace(/\*$/, "").replace(/:\d+$/, "");
        if (v && !names.includes(v)) names.push(v);
      }
    }
    return names;
  }

  // expandURI expands an RFC 6570 template (levels 1 to 3: simple, reserved (+), fragment
  // (#), label (.), path (/), path-style (;), query (?) and continuation (&) expressions,
  // prefixes :n) with string values; an empty value counts as undefined.
  function expandURI(template, values) {
    const ops = {
      "": { first: "", sep: ",", named: false, ifemp: "", reserved: false },
      "+": { first: "", sep: ",", named: false, ifemp: "", reserved: true },
      "#": { first: "#", sep: ",", named: false, ifemp: "", reserved: true },
      ".": { first: ".", sep: ".", named: false, ifemp: "", reserved: false },
      "/": { first: "/", sep: "/", named: false, ifemp: "", reserved: false },
      ";": { first: ";", sep: ";", named: true, ifemp: "", reserved: false },
      "?": { first: "?", sep: "&", named: true, ifemp: "=", reserved: false },
      "&": { first: "&", sep: "&", named: true, ifemp: "=", reserved: false },
    };
    const enc = (v, reserved) => reserved
      ? encodeURI(v).replace(/%25([0-9A-Fa-f]{2})/g, "%$1")
      : encodeURIComponent(v).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
    return template.replace(/\{([^}]*)\}/g, (_, expr) => {
      let op = "";
      if (/^[+#./;?&]/.test(expr)) { op = expr[0]; expr = expr.slice(1); }
      const o = ops[op];
      const parts = [];
      for (let spec of expr.split(",")) {
        spec = spec.replace(/\*$/, "");
        let name = spec, max = 0;
        const m = /^(.*):(\d+)$/.exec(spec);
        if (m) { name = m[1]; max = Number(m[2]); }
        let v = values[name];
        if (v === undefined || v === "") continue;
        if (max) v = [...v].slice(0, max).join("");
        const e = enc(v, o.reserved);
        parts.push(o.named ? name + (e === "" ? o.ifemp : "=" + e) : e);
      }
      return parts.length ? o.first + parts.join(o.sep) : "";
    });
  }

  function templateCard(server, tp, out) {
    const vars = uriVars(tp.uriTemplate || "");
    const form = el("form", { class: "call", dataset: { template: tp.uriTemplate } });
    const inputs = vars.map((v) => {
      const id = "uri-" + server + "-" + tp.name + "-" + v;
      const input = el("input", { id, name: v, type: "text", required: true, autocomplete: "off" });
      form.append(el("label", { for: id }, el("span", {}, v, el("span", { class: "req" }, "required")), input));
      return input;
    });
    const preview = el("div", { class: "mono tag", dataset: { expanded: "" } }, tp.uriTemplate || "");
    const update = () => {
      const values = {};
      for (const i of inputs) values[i.name] = i.value;
      preview.textContent = expandURI(tp.uriTemplate || "", values);
      preview.dataset.expanded = preview.textContent;
    };
    for (const i of inputs) i.addEventListener("input", update);
    const submit = el("button", { type: "submit", class: "primary" }, "Read");
    form.append(el("div", {}, el("span", { class: "muted" }, "URI: "), preview), el("div", {}, submit));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      update();
      readResource(server, preview.textContent, out);
    });
    return el("article", { class: "tool", dataset: { resourceTemplate: tp.name } },
      el("div", { class: "tool-head" },
        el("h3", { class: "mono" }, tp.uriTemplate || "", tp.title || tp.name ? el("span", { class: "tag" }, " · " + (tp.title || tp.name)) : null)),
      tp.description ? el("p", { class: "desc" }, tp.description) : null,
      tp.mimeType ? el("p", { class: "tag" }, tp.mimeType) : null,
      vars.length ? form : el("p", { class: "muted" }, "No variables."));
  }

  // ---- resource subscriptions (console/subscribe) -----------------------------------

  const subscriptions = new Map(); // server + " " + uri (server names have no spaces) → {server, uri, st, updates, last, box}

  function subscribeButton(server, uri) {
    const key = server + " " + uri;
    const s = subscriptions.get(key);
    const on = !!s && !s.error;
    return el("button", { type: "button", dataset: { action: on ? "unsubscribe" : "subscribe" }, "aria-pressed": on ? "true" : "false",
      onclick: () => { if (on) unsubscribe(key); else subscribe(server, uri); } }, on ? "Unsubscribe" : "Subscribe");
  }

  // subscribe opens console/subscribe for the URI; a refusal (a server without the
  // resources.subscribe capability, say) stays in the list with its reason until dismissed.
  function subscribe(server, uri) {
    const key = server + " " + uri;
    const s = { server, uri, updates: 0, last: null, subscribed: false, error: "" };
    subscriptions.set(key, s);
    s.st = stream("console/subscribe", (v) => {
      if (!v) return;
      if (v.subscribed) {
        s.subscribed = true;
        activity(server + ": subscribed to " + uri);
      } else {
        s.updates++;
        s.last = v.time;
        activity(server + ": " + uri + " updated");
      }
      refreshSubscription(key);
    }, {
      params: { server, uri },
      onEnd() { if (subscriptions.get(key) === s) subscriptions.delete(key); refreshSubscriptions(server); },
      onError(e) {
        s.error = e.message;
        s.st = null;
        activity(server + ": subscribing to " + uri + " failed: " + e.message, "bad");
        refreshSubscriptions(server);
      },
    });
    refreshSubscriptions(server);
  }

  // unsubscribe closes the subscription's stream (or dismisses a failed one).
  function unsubscribe(key) {
    const s = subscriptions.get(key);
    if (!s) return;
    subscriptions.delete(key);
    if (s.st) {
      s.st.close();
      activity(s.server + ": unsubscribed from " + s.uri);
    }
    refreshSubscriptions(s.server);
  }

  function subscriptionState(s) {
    return s.error ? "failed: " + s.error
      : !s.subscribed ? "subscribing…"
        : s.updates ? s.updates + (s.updates === 1 ? " update" : " updates") + ", last at " + new Date(s.last).toLocaleTimeString([], { hour12: false })
          : "subscribed, no update yet";
  }

  // refreshSubscription shows the subscription's state and, after an update, reads the
  // resource again.
  async function refreshSubscription(key) {
    const s = subscriptions.get(key);
    const box = document.querySelector('[data-subscription="' + CSS.escape(key) + '"]');
    if (!s || !box) { if (s) refreshSubscriptions(s.server); return; }
    box.querySelector(".sub-state").textContent = subscriptionState(s);
    box.dataset.updates = String(s.updates);
    if (!s.subscribed || s.error) return;
    const body = box.querySelector(".sub-body");
    try {
      const r = await call("console/callTool", { tool: "read_mcp_resource", args: { server: s.server, uri: s.uri } });
      body.replaceChildren(...contentsView(r, s.uri));
    } catch (e) {
      body.replaceChildren(el("p", { class: "error" }, e.message));
    }
  }

  function subscriptionsView(server) {
    const mine = [...subscriptions.entries()].filter(([, s]) => s.server === server);
    const box = el("div", { id: "subscriptions", dataset: { server } });
    if (!mine.length) return box;
    box.append(el("h3", {}, "Subscriptions"), ...mine.map(([key, s]) => el("article", { class: "tool", dataset: Object.assign({ subscription: key, uri: s.uri, updates: String(s.updates) }, s.error ? { error: "true" } : {}) },
      el("div", { class: "tool-head" }, el("h3", { class: "mono" }, s.uri), el("span", { class: "sub-state" + (s.error ? " error" : " muted") }, subscriptionState(s)),
        el("button", { type: "button", dataset: { action: s.error ? "dismiss" : "unsubscribe" }, onclick: () => unsubscribe(key) }, s.error ? "Dismiss" : "Unsubscribe")),
      el("div", { class: "sub-body" }))));
    return box;
  }

  // refreshSubscriptions redraws the Subscriptions list and the buttons of server's
  // resources tab, when it is the one shown.
  function refreshSubscriptions(server) {
    if (state.selected !== server || state.tab !== "resources") return;
    const pane = $("#pane-resources");
    const old = pane.querySelector("#subscriptions");
    if (!old) return;
    old.replaceWith(subscriptionsView(server));
    for (const tr of pane.querySelectorAll("tr[data-uri]")) {
      const b = tr.querySelector('[data-action="subscribe"], [data-action="unsubscribe"]');
      if (b) b.replaceWith(subscribeButton(server, tr.dataset.uri));
    }
    for (const [key, s] of subscriptions) if (s.server === server && s.subscribed && !s.error) refreshSubscription(key);
  }

  function contentsView(r, uri) {
    const contents = (r.structured && r.structured.contents) || [];
    return contents.length ? contents.map((c) =>
      c.text !== undefined ? el("pre", { class: "result" }, c.text)
        : (c.blob && /^image\//.test(c.mimeType || "")) ? el("img", { src: "data:" + c.mimeType + ";base64," + c.blob, alt: uri })
          : el("p", { class: "muted" }, "binary content, " + (c.mimeType || "unknown type"))) : [resultView(r, 0)];
  }

  async function readResource(server, uri, out) {
    const current = claim(out);
    out.replaceChildren(el("p", { class: "muted" }, "Reading " + uri + "…"));
    try {
      const r = await call("console/callTool", { tool: "read_mcp_resource", args: { server, uri } });
      if (current()) out.replaceChildren(el("h3", {}, uri), el("div", { dataset: { read: uri, result: r.isError ? "error" : "ok" } }, ...contentsView(r, uri)));
    } catch (e) {
      if (current()) out.replaceChildren(el("p", { class: "error" }, e.message));
    } finally {
      // How many reads were answered (drawn, dropped or failed): a test waits on it.
      out.dataset.reads = String(Number(out.dataset.reads || 0) + 1);
    }
  }

  // renderPrompts lists the server's prompt templates (prompts/list), each with a form of
  // its arguments (values completed with prompts/complete as they are typed) that gets the
  // prompt (prompts/get) and shows its messages.
  async function renderPrompts(pane, name, current) {
    if (!has("prompts/list")) {
      pane.replaceChildren(el("p", { class: "muted" }, "Prompts need the prompts service (mcpprompts) in the profile."));
      return;
    }
    const list = await load(pane, current, "prompts", () => call("prompts/list", { server: name }));
    if (list === undefined) return;
    const prompts = (list && list.prompts) || [];
    if (!prompts.length) {
      pane.replaceChildren(el("p", { class: "muted" }, "This server offers no prompts."));
      return;
    }
    pane.replaceChildren(...prompts.map((p) => promptCard(p)));
  }

  // onPromptsChanged re-lists the prompts tab when its server's prompts may have changed
  // (prompts/watch), unless the user is filling in one of its forms.
  function onPromptsChanged(c) {
    if (state.tab !== "prompts" || !state.selected || (c.server && c.server !== state.selected)) return;
    const pane = $("#pane-prompts");
    if ([...pane.querySelectorAll("form[data-get-prompt]")].some((f) => !f.hidden)) return;
    renderTab();
  }

  function promptCard(p) {
    const form = promptForm(p);
    form.hidden = true;
    const args = p.arguments || [];
    return el("article", { class: "tool", dataset: { prompt: p.name } },
      cardHead(p.name, p.title, form, "open-prompt", "Get…", "input"),
      p.description ? el("p", { class: "desc" }, p.description) : null,
      args.length ? el("table", { class: "schema" },
        el("thead", {}, el("tr", {}, el("th", {}, "Argument"), el("th", {}, "Description"))),
        el("tbody", {}, args.map((a) => el("tr", {},
          el("td", {}, a.name, a.required ? el("span", { class: "req", title: "required" }, "required") : null),
          el("td", {}, a.title ? a.title + (a.description ? " — " : "") : "", a.description || "")))))
        : el("p", { class: "muted" }, "No arguments."),
      form);
  }

  function promptForm(p) {
    const form = el("form", { class: "call", dataset: { getPrompt: p.name } });
    const inputs = [];
    for (const a of p.arguments || []) {
      const id = "parg-" + p.server + "-" + p.name + "-" + a.name;
      const dl = el("datalist", { id: id + "-values" });
      const input = el("input", { id, name: a.name, type: "text", required: a.required, list: dl.id, autocomplete: "off" });
      let timer = 0;
      input.addEventListener("input", () => {
        if (!has("prompts/complete")) return;
        clearTimeout(timer);
        timer = setTimeout(async () => {
          const context = {};
          for (const o of inputs) if (o !== input && o.value) context[o.name] = o.value;
          try {
            const r = await call("prompts/complete", { server: p.server, prompt: p.name, argument: a.name, value: input.value, context });
            dl.replaceChildren(...((r && r.values) || []).map((v) => el("option", { value: v })));
          } catch (_) { dl.replaceChildren(); /* no completions */ }
        }, 150);
      });
      inputs.push(input);
      form.append(el("label", { for: id }, el("span", {}, a.title || a.name, a.required ? el("span", { class: "req" }, "required") : null,
        a.description ? el("span", { class: "hint" }, " " + a.description) : null), input, dl));
    }
    const out = el("div", { class: "out", "aria-live": "polite" });
    const submit = el("button", { type: "submit", class: "primary" }, "Get " + p.name);
    form.append(el("div", {}, submit), out);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const args = {};
      for (const i of inputs) if (i.value !== "") args[i.name] = i.value;
      submit.disabled = true;
      out.replaceChildren(el("p", { class: "muted", role: "status" }, "Getting…"));
      try {
        const r = await call("prompts/get", { server: p.server, name: p.name, arguments: args });
        out.replaceChildren(promptResult(r));
        activity("prompt " + p.server + "/" + p.name + ": " + ((r && r.messages) || []).length + " messages");
      } catch (err) {
        out.replaceChildren(el("p", { class: "error", role: "alert", dataset: { result: "error" } }, err.message));
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  function promptResult(r) {
    const msgs = (r && r.messages) || [];
    return el("div", { class: "result", dataset: { result: "ok" } },
      r && r.description ? el("div", { class: "tag" }, r.description) : null,
      msgs.length ? msgs.map((m) => el("div", { class: "message", dataset: { role: m.role } },
        el("div", { class: "role" }, m.role), contentView(m.content)))
        : el("p", { class: "muted" }, "No messages."));
  }

  // contentView shows one MCP content block of a prompt message.
  function contentView(c) {
    if (!c) return el("p", { class: "muted" }, "(empty)");
    switch (c.type) {
      case "text": return el("pre", {}, c.text || "");
      case "image": return el("img", { src: "data:" + c.mimeType + ";base64," + c.data, alt: "image (" + (c.mimeType || "") + ")" });
      case "audio": return el("audio", { controls: true, src: "data:" + c.mimeType + ";base64," + c.data });
      case "resource": {
        const res = c.resource || {};
        return el("div", {}, el("div", { class: "tag mono" }, res.uri || ""),
          res.text !== undefined ? el("pre", {}, res.text) : el("p", { class: "muted" }, "binary content, " + (res.mimeType || "unknown type")));
      }
      case "resource_link": return el("div", { class: "mono" }, (c.name ? c.name + " " : "") + (c.uri || ""));
      default: return el("pre", {}, JSON.stringify(c, null, 2));
    }
  }

  async function renderInfo(pane, name, v) {
    const kv = el("dl", { class: "kv" },
      el("dt", {}, "Source"), el("dd", {}, v.unmanaged ? "profile row" : v.layer ? v.layer + " settings file" : v.source || ""),
      el("dt", {}, "Status"), el("dd", {}, v.status || ""),
      el("dt", {}, "Starts"), el("dd", {}, String(v.starts || 0)),
      el("dt", {}, "Connected at"), el("dd", {}, v.connectedAt || "—"),
      el("dt", {}, "Instructions"), el("dd", {}, v.instructionBytes ? v.instructionBytes + " bytes" : "none"));
    const instr = el("div", {}, el("p", { class: "muted" }, has("console/instructions") ? "Loading instructions…" : ""));
    pane.replaceChildren(kv, el("h3", {}, "Instructions"), instr,
      el("h3", {}, "Configuration (as written, secrets redacted)"),
      el("pre", {}, JSON.stringify(v.config || {}, null, 2)));
    if (!has("console/instructions")) return;
    try {
      const r = await call("console/instructions", { server: name });
      instr.replaceChildren(r && r.text ? el("pre", {}, r.text) : el("p", { class: "muted" }, "The server sent no instructions."));
    } catch (e) {
      instr.replaceChildren(el("p", { class: "error" }, e.message));
    }
  }

  // ---- start ------------------------------------------------------------------------

  setInterval(() => {
    for (const s of document.querySelectorAll(".since[data-since]")) {
      if (s.dataset.since) s.textContent = since(s.dataset.since);
    }
    for (const f of inflight.values()) f.li.querySelector(".elapsed").textContent = elapsedText(f);
  }, 1000);

  $("#detail-close").addEventListener("click", () => {
    const was = state.selected;
    state.selected = null;
    $("#detail").hidden = true;
    if (was) renderServer(was);
  });
  $("#activity-clear").addEventListener("click", () => $("#activity").replaceChildren());
  for (const b of document.querySelectorAll(".tabs [role=tab]")) {
    b.addEventListener("click", () => showTab(b.id.slice(4)));
    b.addEventListener("keydown", (e) => {
      if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
      const tabs = [...document.querySelectorAll(".tabs [role=tab]")];
      const i = tabs.indexOf(b) + (e.key === "ArrowRight" ? 1 : -1);
      const t = tabs[(i + tabs.length) % tabs.length];
      t.focus();
      showTab(t.id.slice(4));
    });
  }


  // ---- MCP Apps: a tool's interactive view (docs/web.md, "Apps") ---------------------
  //
  // A tool whose server names a ui:// resource in its _meta.ui (console/tools' ui) has a
  // view, rendered wherever a call of the tool appears: under the call in the tool's form
  // and in the Chat view. The view runs in the apps' sandbox (SEP-1865's double iframe): an
  // outer frame from the sandbox listener's origin, which loads the resource's HTML into an
  // inner frame of an opaque origin under the CSP the resource's ui.csp asks for. The page
  // is the host end of the bridge through the ext-apps package's own AppBridge (vendored in
  // vendor/ext-apps-bridge.js, loaded with the first view): the view's initialize, the
  // call's input and result, the view's tool calls (its own server's tools whose
  // visibility includes "app", through the same pipeline as the caller's calls: the
  // tool's form's console/callTool, the chat session's permissions and approvals), its
  // resource reads, its messages, logs, links, size and teardown.

  const apps = { sandbox: "", bridge: null, resources: new Map(), views: new Set() };
  const HOST_INFO = { name: "harness", version: "1" };
  const APP_MIME = "text/html;profile=mcp-app";

  // appBridge loads the vendored bridge once and answers its exports.
  function appBridge() {
    if (!apps.bridge) {
      apps.bridge = new Promise((resolve, reject) => {
        const s = el("script", { src: "/vendor/ext-apps-bridge.js" });
        const started = performance.now();
        s.addEventListener("load", () => {
          perf.bridgeMs = performance.now() - started; // fetched, parsed and run
          if (window.ExtAppsBridge) resolve(window.ExtAppsBridge);
          else reject(new Error("the apps' bridge did not define itself"));
        });
        s.addEventListener("error", () => { apps.bridge = null; reject(new Error("the apps' bridge did not load")); });
        document.head.append(s);
      });
    }
    return apps.bridge;
  }

  // appResource reads a view's HTML and its ui metadata (csp, permissions, prefersBorder)
  // once per page and server (console/readResource).
  function appResource(server, uri) {
    const key = server + "\n" + uri;
    let p = apps.resources.get(key);
    if (!p) {
      p = call("console/readResource", { server, uri }).then((r) => {
        const all = (r && r.contents) || [];
        const c = all.find((x) => x.uri === uri) || all[0];
        if (!c) throw new Error(uri + ": the server sent no contents");
        if ((c.mimeType || "").replace(/\s+/g, "").toLowerCase() !== APP_MIME) {
          throw new Error(uri + ": not an app's HTML (" + (c.mimeType || "no type") + ", want " + APP_MIME + ")");
        }
        const html = c.text !== undefined ? c.text
          : new TextDecoder().decode(Uint8Array.from(atob(c.blob || ""), (ch) => ch.charCodeAt(0)));
        const ui = (c._meta && c._meta.ui) || {};
        return { html, csp: ui.csp, permissions: ui.permissions || {}, prefersBorder: ui.prefersBorder };
      });
      p.catch(() => apps.resources.delete(key));
      apps.resources.set(key, p);
    }
    return p;
  }

  // appTool finds the tool an app of server calls by its name on that server, refusing a
  // tool whose visibility leaves the app out (SEP-1865: "app" must be listed).
  async function appTool(server, name) {
    const tools = await call("console/tools", { server });
    const t = (tools || []).find((x) => x.mcpTool === name);
    if (!t) throw new Error("the server " + server + " has no tool " + JSON.stringify(name));
    if (t.ui && !(t.ui.visibility || []).includes("app")) {
      throw new Error("the tool " + name + " is not callable by apps (its visibility is " + t.ui.visibility.join(", ") + ")");
    }
    return t;
  }

  // mcpResult turns a console/callTool answer into the CallToolResult an app gets: the
  // server's own when it answered, else one built from the pipeline's content (a denied,
  // invalid or failed call, isError set).
  function mcpResult(r) {
    if (r.raw && typeof r.raw === "object") return r.raw;
    const content = (r.content || []).map((c) => c.type === "image" && c.dataURL
      ? { type: "image", mimeType: c.mediaType, data: c.dataURL.slice(c.dataURL.indexOf(",") + 1) }
      : { type: "text", text: c.type === "json" ? JSON.stringify(c.json) : (c.text || "") });
    const out = { content, isError: !!r.isError };
    if (r.structured !== undefined && r.structured !== null && !r.isError) out.structuredContent = r.structured;
    return out;
  }

  function hostContext(t) {
    return {
      toolInfo: { tool: { name: t.mcpTool || t.name, title: t.title, description: t.description, inputSchema: t.parameters || { type: "object" } } },
      theme: window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
      displayMode: "inline", availableDisplayModes: ["inline"], platform: "web",
      locale: navigator.language, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      containerDimensions: { maxHeight: 900 },
    };
  }

  // appView makes the view of tool t (a console/tools entry with ui) for one call of it.
  // opts.callTool(tool, args) runs a call the view makes (tool: the console/tools entry)
  // and answers the console/callTool-shaped result; opts.message(params) takes a ui/message.
  // Append node, then call start; tell the view the call's input, result or cancellation
  // (held until the view reports initialized), and tear it down when it goes.
  function appView(t, opts) {
    const uri = t.ui.resourceUri;
    const status = el("span", { class: "tag app-state", role: "status" }, "loading…");
    const frame = el("iframe", { class: "app-frame", title: "Interactive view of " + t.name });
    const close = el("button", { type: "button", class: "ghost", dataset: { action: "close-app" } }, "Close view");
    const node = el("div", { class: "app", dataset: { app: uri, server: t.server, tool: t.name, state: "loading" } },
      el("div", { class: "app-head" }, el("span", {}, "Interactive view"), el("span", { class: "mono" }, uri), status, close), frame);
    let bridge = null, initialized = false, gone = false;
    const queue = [];
    const setState = (st, text) => { node.dataset.state = st; status.textContent = text; };
    const whenReady = (fn) => { if (gone) return; if (initialized) fn(); else queue.push(fn); };
    const v = {
      node,
      input(args) { whenReady(() => bridge.sendToolInput({ arguments: args || {} })); },
      result(r) { whenReady(() => bridge.sendToolResult(r)); },
      cancelled(reason) { whenReady(() => bridge.sendToolCancelled({ reason: reason || "cancelled" })); },
      async start() {
        try {
          const [lib, res] = await Promise.all([appBridge(), appResource(t.server, uri)]);
          if (!apps.sandbox) throw new Error("this host serves no sandbox for apps");
          if (gone) return;
          // Of the permissions a view may ask for, the page grants clipboard writes only.
          const granted = res.permissions.clipboardWrite ? { clipboardWrite: {} } : {};
          if (granted.clipboardWrite) frame.setAttribute("allow", "clipboard-write");
          frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
          if (res.prefersBorder === false) node.classList.add("borderless");
          bridge = new lib.AppBridge(null, HOST_INFO, {
            openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, message: { text: {} },
            sandbox: { permissions: granted, csp: res.csp || {} },
          }, { hostContext: hostContext(t) });
          bridge.oncalltool = async (p) => {
            const tool = await appTool(t.server, p.name);
            activity(t.server + "'s view calls " + p.name);
            return mcpResult(await opts.callTool(tool, p.arguments || {}));
          };
          bridge.onreadresource = (p) => call("console/readResource", { server: t.server, uri: p.uri });
          bridge.onmessage = async (p) => { await opts.message(p); return {}; };
          bridge.onopenlink = async (p) => {
            const u = new URL(p.url);
            if (u.protocol !== "https:" && u.protocol !== "http:") throw new Error("only http and https links open");
            window.open(u.href, "_blank", "noopener,noreferrer");
            return {};
          };
          bridge.onloggingmessage = (p) => activity(t.server + "'s view (" + (p.level || "info") + "): " +
            (typeof p.data === "string" ? p.data : JSON.stringify(p.data)));
          bridge.onsizechange = ({ height }) => { if (typeof height === "number") frame.style.height = Math.max(40, Math.min(height, 900)) + "px"; };
          bridge.onrequestteardown = () => { v.teardown("the view asked to close"); };
          bridge.onsandboxready = () => bridge.sendSandboxResourceReady({ html: res.html, csp: res.csp, permissions: granted });
          bridge.oninitialized = () => {
            initialized = true;
            setState("initialized", "ready");
            activity(t.server + "'s view " + uri + " initialized");
            for (const fn of queue.splice(0)) fn();
          };
          await bridge.connect(new lib.PostMessageTransport(frame.contentWindow, frame.contentWindow));
          const url = new URL(apps.sandbox);
          if (res.csp) url.searchParams.set("csp", JSON.stringify(res.csp));
          frame.src = url.href;
          apps.views.add(v);
        } catch (e) {
          setState("failed", "failed: " + e.message);
          activity(t.server + "'s view " + uri + " failed: " + e.message, "bad");
        }
      },
      // teardown tells the view it goes (ui/resource-teardown, answered within 2 s) and
      // removes its frame.
      async teardown(reason) {
        if (gone) return;
        gone = true;
        apps.views.delete(v);
        if (bridge && initialized) {
          let timer;
          await Promise.race([bridge.teardownResource({ reason }).catch(() => {}), new Promise((r) => { timer = setTimeout(r, 2000); })]);
          clearTimeout(timer);
        }
        if (bridge) await bridge.close().catch(() => {});
        frame.remove();
        close.remove();
        setState("closed", "closed");
      },
    };
    close.addEventListener("click", () => v.teardown("closed on the page"));
    return v;
  }

  // ---- the Chat view (agent/* of the host's agent) ----------------------------------
  //
  // A conversation with the host's agent: the session's events (agent/events, replayed from
  // the start, then live) drawn as messages — the user's, the assistant's text streamed as
  // it arrives, its reasoning folded, each tool call a row to expand (arguments and result),
  // approvals asked inline with their buttons, usage per turn — and the sessions of the
  // host (open and stored) to reopen.

  const chat = { session: "", sub: null, seq: 0, live: null, calls: new Map(), running: false, turnOpen: false, sending: false, stick: true, autoTop: 0, resize: null, tools: null, views: [], cost: 0 };
  // usd writes an amount in US dollars as the terminal does (model.FormatCost).
  const usd = (v) => v < 0.0001 ? "<$0.0001" : "$" + (v < 1 ? v.toFixed(4) : v.toFixed(2));

  function chatInfo(text) { $("#chat-info").textContent = text; }

  async function chatInit() {
    if (!has("agent/start")) return;
    // Every control works before the view shows: a click on Send while the lists load
    // would otherwise submit the form natively, reloading the page.
    const log = $("#chat-log");
    // The view keeps to the end until the person scrolls up, and again once they are back at
    // the end. Only a scroll above where the page last put the view is theirs: the events
    // of the page's own scrolls arrive late, when a streamed answer has grown further.
    log.addEventListener("scroll", () => {
      if (log.scrollHeight - log.scrollTop - log.clientHeight < 40) chat.stick = true;
      else if (log.scrollTop < chat.autoTop - 1) chat.stick = false;
    });
    // The end moves without an append too: a streamed answer grows, a view's frame grows
    // after it is appended. Every node of the conversation is watched (chatAppend).
    chat.resize = new ResizeObserver(() => { if (chat.stick) chatToEnd(); });
    chat.resize.observe(log);
    $("#chat-agent").addEventListener("change", chatNotice);
    $("#chat-new").addEventListener("click", () => chatStart());
    $("#chat-sessions").addEventListener("change", (e) => { if (e.target.value) chatOpen(e.target.value); });
    $("#chat-form").addEventListener("submit", (e) => { e.preventDefault(); chatSend(); });
    $("#chat-input").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); chatSend(); }
    });
    $("#chat-cancel").addEventListener("click", () => {
      if (chat.session) call("agent/cancel", { session: chat.session }).catch((e) => chatInfo("cancel: " + e.message));
    });
    $("#chat").hidden = false;
    try {
      chat.agents = (await call("agent/agents")) || [];
      $("#chat-agent").replaceChildren(...chat.agents.map((a) =>
        el("option", { value: a.name }, a.name === "" ? "main" + (a.model ? " (" + a.model + ")" : "") : a.name)));
      chatNotice();
    } catch (e) { chatInfo("agents: " + e.message); }
    await chatSessions();
  }

  // chatNotice says, above the conversation, why the chosen agent's model cannot answer
  // (no API key: what to set), or nothing.
  function chatNotice() {
    const a = (chat.agents || []).find((x) => x.name === ($("#chat-agent").value || ""));
    const problem = a && a.modelProblem;
    $("#chat-notice").hidden = !problem;
    $("#chat-notice").textContent = problem ? "The agent's model cannot answer yet: " + problem + ". Then restart the host." : "";
  }

  // chatSessions lists the sessions to choose from; a listing answered after a later one
  // began (a start while the page's first listing is slow) is dropped, so the list never
  // goes back to one without the newest session.
  async function chatSessions() {
    const current = claim($("#chat-sessions"));
    let list = { open: [], stored: [] };
    try {
      list = await call("agent/sessions");
    } catch (e) {
      if (current()) chatInfo("sessions: " + e.message);
      return;
    } finally {
      // How many listings were answered (drawn, dropped or failed): a test waits on it.
      $("#chat").dataset.listings = String(Number($("#chat").dataset.listings || 0) + 1);
    }
    if (!current()) return;
    const seen = new Set();
    const opts = [el("option", { value: "" }, chat.session ? "—" : "choose a session…")];
    // Newest first (the last change), the open sessions among the stored ones, each named
    // by its first message.
    const all = [...(list.open || []), ...(list.stored || [])]
      .sort((a, b) => Date.parse(b.updated || b.created) - Date.parse(a.updated || a.created));
    for (const info of all) {
      if (seen.has(info.id)) continue;
      seen.add(info.id);
      const when = new Date(info.updated || info.created).toLocaleString();
      opts.push(el("option", { value: info.id, selected: info.id === chat.session },
        (info.title || "(empty)") + " · " + when + (info.agent ? " · " + info.agent : "")));
    }
    $("#chat-sessions").replaceChildren(...opts);
  }

  // chatStart and chatOpen follow the session the person chose last: an answer that comes
  // after a later choice's (two quick picks in the list) is dropped, not shown over it.
  async function chatStart() {
    const current = claim($("#chat-log"));
    try {
      const info = await call("agent/start", { agent: $("#chat-agent").value || "" });
      if (!current()) return;
      chatFollow(info);
      chatSessions();
      $("#chat-input").focus();
    } catch (e) { if (current()) chatInfo("new session: " + e.message); }
  }

  async function chatOpen(id) {
    const current = claim($("#chat-log"));
    try {
      const info = await call("agent/open", { session: id });
      if (current()) chatFollow(info);
    } catch (e) {
      if (current()) chatInfo("open: " + e.message);
    } finally {
      // How many opens were answered (followed, dropped or failed): a test waits on it.
      $("#chat").dataset.opens = String(Number($("#chat").dataset.opens || 0) + 1);
    }
  }

  function chatFollow(info) {
    if (chat.sub) chat.sub.close();
    for (const v of chat.views.splice(0)) v.then((view) => view && view.teardown("another session was opened"));
    Object.assign(chat, { session: info.id, seq: 0, live: null, calls: new Map(), turnOpen: false, sending: false, stick: true, autoTop: 0, cost: 0 });
    $("#chat-log").replaceChildren();
    if (chat.resize) { chat.resize.disconnect(); chat.resize.observe($("#chat-log")); }
    $("#chat").dataset.session = info.id;
    chatInfo("session " + info.id + (info.model ? " · model " + info.model : "") + (info.turns ? " · " + info.turns + " turns" : ""));
    chatRunning();
    chat.sub = stream("agent/events", onChatEvent, {
      params: { session: info.id, after: 0 },
      onError(e) { chatInfo("session " + info.id + ": " + e.message); },
    });
  }

  async function chatSend() {
    const text = $("#chat-input").value.trim();
    if (!text) return;
    if (!chat.session) await chatStart();
    if (!chat.session) return;
    const compact = /^\/compact(?:\s+([\s\S]*))?$/.exec(text);
    if (compact) { // summarise the conversation now (agent/compact); its event marks the place
      $("#chat-input").value = "";
      try { await call("agent/compact", { session: chat.session, focus: (compact[1] || "").trim() }); }
      catch (e) { chatInfo("compact: " + e.message); }
      return;
    }
    try {
      await chatSendText(text);
      $("#chat-input").value = "";
    } catch (e) { chatInfo("send: " + e.message); }
  }

  // chatSendText sends text as the session's next turn. Send stays disabled from the click
  // until the turn's end: the turn's own events say when it runs (user) and when it ended
  // (turn.end), and a fast turn's end can arrive before agent/send's answer.
  async function chatSendText(text) {
    chat.sending = true;
    chatRunning();
    try {
      await call("agent/send", { session: chat.session, text });
    } finally {
      chat.sending = false;
      chatRunning();
      // How many sends were answered (or failed): a test waits on it.
      $("#chat").dataset.sends = String(Number($("#chat").dataset.sends || 0) + 1);
    }
  }

  // chatRetry runs the session's last turn again (agent/retry), from the Retry button of a
  // turn that ended incomplete or failed; the new turn's user event takes the button away.
  async function chatRetry(button) {
    if (!chat.session || chat.running) return;
    button.disabled = true;
    chat.sending = true;
    chatRunning();
    try {
      await call("agent/retry", { session: chat.session });
    } catch (e) {
      chatInfo("retry: " + e.message);
      button.disabled = false;
    } finally {
      chat.sending = false;
      chatRunning();
    }
  }

  // chatRunning shows whether a turn runs (its user event came, its turn.end not yet) or
  // is being sent.
  function chatRunning() {
    const on = chat.turnOpen || chat.sending;
    chat.running = on;
    $("#chat-cancel").hidden = !on;
    $("#chat-send").disabled = on;
    $("#chat").dataset.running = on ? "true" : "false";
  }

  // chatAppend adds node to the conversation and keeps the view at its end while it is
  // there: a reopened session opens at its end, and a person who scrolled up to read is
  // not pulled down (chat.stick, kept by the log's scroll events). The node is watched
  // for growth (a streamed answer, a view's frame), which keeps the end in view too.
  function chatAppend(node) {
    $("#chat-log").append(node);
    if (chat.resize) chat.resize.observe(node);
    if (chat.stick) chatToEnd();
    return node;
  }

  // chatToEnd scrolls the conversation to its end, noting where the page put it.
  function chatToEnd() {
    const log = $("#chat-log");
    log.scrollTop = log.scrollHeight;
    chat.autoTop = log.scrollTop;
  }

  // chatLive is the assistant message being streamed: its reasoning and text nodes.
  function chatLive() {
    if (!chat.live) {
      const reasoning = el("pre", {});
      const fold = el("details", { class: "reasoning", hidden: true }, el("summary", {}, "reasoning"), reasoning);
      const text = el("div", { class: "msg assistant", hidden: true });
      chatAppend(fold);
      chatAppend(text);
      chat.live = { fold, reasoning, text };
    }
    return chat.live;
  }

  function chatCallRow(c) {
    let row = chat.calls.get(c.id);
    if (!row) {
      const outcome = el("span", { class: "outcome" }, "running…");
      const body = el("div", {}, el("pre", { dataset: { part: "args" } }, prettyJSON(c.args)));
      row = { node: el("details", { class: "call", dataset: { call: c.id, tool: c.tool } },
        el("summary", {}, el("span", { class: "tool" }, c.tool), outcome), body), outcome, body };
      chat.calls.set(c.id, row);
      chatAppend(row.node);
      // A question its server asked before the row was drawn (another stream) moves here.
      for (const q of document.querySelectorAll("#questions [data-question]")) {
        const ev = q._question;
        if (ev && chatQuestion(q, ev)) break;
      }
      $("#questions-box").hidden = $("#questions").childElementCount === 0;
      // The tool's view, when it has one, under the row (the call's input now, its result
      // with tool.result).
      row.view = chatView(c, row);
      chat.views.push(row.view);
    }
    return row;
  }

  // chatQuestion puts a server's question (card) raised by a call of the conversation shown
  // next to that call's row; false when it is not one.
  function chatQuestion(card, ev) {
    const row = ev.session && ev.session === chat.session && chat.calls.get(ev.call);
    if (!row) return false;
    card.dataset.here = "chat";
    card.dataset.session = ev.session;
    card.dataset.call = ev.call;
    row.node.after(card);
    if (chat.stick) card.scrollIntoView({ block: "nearest" });
    return true;
  }

  // chatTool finds a tool of the conversation by its public name (console/tools, read
  // again when a name is not known yet: a server that connected later).
  async function chatTool(name) {
    if (!has("console/tools")) return null;
    for (let fresh = false; ; fresh = true) {
      if (!chat.tools || fresh) {
        chat.tools = call("console/tools", { server: "" }).then((list) => new Map((list || []).map((t) => [t.name, t])));
        chat.tools.catch(() => { chat.tools = null; });
      }
      const t = (await chat.tools).get(name);
      if (t || fresh) return t || null;
    }
  }

  // chatView shows the view of a call's tool, when it has one, under the call's row: the
  // view's own calls go through the session (agent/callTool: its permissions and
  // approvals), its messages into the conversation. It resolves to the view, or null.
  async function chatView(c, row) {
    const t = await chatTool(c.tool).catch(() => null);
    if (!t || !t.ui || !apps.sandbox || !row.node.isConnected) return null;
    const session = chat.session;
    const v = appView(t, {
      callTool: (tool, args) => call("agent/callTool", { session, server: t.server, tool: tool.mcpTool, args })
        .then((r) => ({ raw: r.raw, isError: r.isError, content: [{ type: "text", text: r.text || r.outcome }] })),
      message: async (p) => {
        const text = (p.content || []).filter((b) => b.type === "text").map((b) => b.text).join("\n").trim();
        if (!text) throw new Error("the view's message has no text");
        if (session !== chat.session) throw new Error("the view's session is not the one shown");
        await chatSendText(text);
      },
    });
    row.node.after(v.node);
    v.start();
    let args = {};
    try { args = JSON.parse(c.args || "{}"); } catch (_) { /* masked or not JSON: the view gets {} */ }
    v.input(args);
    return v;
  }

  // previewView shows what a call would do before it runs (an approval's preview, from the
  // tool): a unified diff side by side, a command as it will run, other text as it is.
  function previewView(pv) {
    if (pv.kind === "diff") return diffSideBySide(pv.text || "");
    return el("pre", { class: "preview" + (pv.kind === "command" ? " command" : ""), dataset: { preview: pv.kind || "text" } }, pv.text || "");
  }

  // diffSideBySide lays a unified diff out in two columns, the old text left and the new
  // right, with their line numbers: a removed line and the added line that replaces it
  // face each other; a file's header and each hunk's head span both.
  function diffSideBySide(text) {
    const body = el("tbody");
    let oldNo = 0, newNo = 0, del = [], add = [];
    const cell = (no, t, kind) => [el("td", { class: "ln" }, no === undefined ? "" : String(no)),
      el("td", { class: "code " + (kind || ""), dataset: kind ? { change: kind } : {} }, t === undefined ? "" : t)];
    const flush = () => {
      for (let i = 0; i < Math.max(del.length, add.length); i++) {
        const d = del[i], a = add[i];
        body.append(el("tr", {}, ...cell(d && d.no, d && d.t, d ? "del" : ""), ...cell(a && a.no, a && a.t, a ? "add" : "")));
      }
      del = []; add = [];
    };
    for (const line of text.replace(/\n$/, "").split("\n")) {
      const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      if (line.startsWith("--- ") || line.startsWith("+++ ") || hunk) {
        flush();
        if (hunk) { oldNo = Number(hunk[1]); newNo = Number(hunk[2]); }
        body.append(el("tr", { class: hunk ? "hunk" : "file" }, el("td", { colspan: "4" }, line)));
      } else if (line.startsWith("-")) {
        del.push({ no: oldNo++, t: line.slice(1) });
      } else if (line.startsWith("+")) {
        add.push({ no: newNo++, t: line.slice(1) });
      } else {
        flush();
        const t = line.startsWith(" ") ? line.slice(1) : line;
        body.append(el("tr", {}, ...cell(oldNo++, t), ...cell(newNo++, t)));
      }
    }
    flush();
    return el("div", { class: "preview diff", dataset: { preview: "diff" } },
      el("table", {}, el("thead", {}, el("tr", {}, el("th", { colspan: "2" }, "before"), el("th", { colspan: "2" }, "after"))), body));
  }

  // samplingAsked shows what a server's sampling request asks of the model: the system
  // prompt, the messages, the token limit and the server's model preferences.
  function samplingAsked(sm) {
    const prefs = [];
    if ((sm.modelHints || []).length) prefs.push("models: " + sm.modelHints.join(", "));
    for (const [k, label] of [["costPriority", "cost"], ["speedPriority", "speed"], ["intelligencePriority", "intelligence"]]) {
      if (sm[k]) prefs.push(label + " " + sm[k]);
    }
    if (sm.temperature) prefs.push("temperature " + sm.temperature);
    return el("div", { class: "sampling", dataset: { part: "sampling" } },
      sm.systemPrompt ? el("p", {}, el("span", { class: "muted" }, "system prompt: "), sm.systemPrompt) : null,
      el("ol", { class: "sampling-messages" }, (sm.messages || []).map((m) =>
        el("li", { dataset: { role: m.role } }, el("span", { class: "muted" }, m.role + ": "), el("span", { class: "pre" }, m.text)))),
      el("p", { class: "muted" }, "up to " + (sm.maxTokens || 0) + " tokens" +
        (prefs.length ? " · the server prefers " + prefs.join(" · ") + " (the session's model answers)" : "")));
  }

  function prettyJSON(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (_) { return String(text || ""); }
  }

  function onChatEvent(ev) {
    if (!ev || !chat.session) return;
    switch (ev.type) {
      case "session":
        // The log's header, or its reopening: a turn the log left open ended with the
        // process that ran it.
        chat.turnOpen = false;
        chatRunning();
        break;
      case "user":
        chat.live = null;
        for (const b of document.querySelectorAll("#chat-log [data-retry]")) b.remove(); // a new turn: no retrying the old one
        chatAppend(el("div", { class: "msg user" }, ev.text || (ev.message && ev.message.content) || ""));
        chat.turnOpen = true;
        chatRunning();
        break;
      case "reasoning.delta": {
        const l = chatLive();
        l.fold.hidden = false;
        l.reasoning.textContent += ev.text || "";
        break;
      }
      case "text.delta": {
        const l = chatLive();
        l.text.hidden = false;
        l.text.textContent += ev.text || "";
        break;
      }
      case "retry":
        if (chat.live) { chat.live.text.textContent = ""; chat.live.reasoning.textContent = ""; }
        chatAppend(el("div", { class: "turn-usage" }, "retrying: " + (ev.error || ev.text || "")));
        break;
      case "assistant": {
        // The durable message: replayed sessions have no deltas, live ones replace theirs.
        const m = ev.message || {};
        const l = chatLive();
        if (m.reasoning) { l.fold.hidden = false; l.reasoning.textContent = m.reasoning; }
        if (m.content) { l.text.hidden = false; l.text.textContent = m.content; }
        chat.live = null;
        break;
      }
      case "tool.start":
        if (ev.call) chatCallRow(ev.call);
        break;
      case "task.background":
        if (ev.task) chatInfo((ev.task.tool || "a call") + " goes on in the background as task " + ev.task.id + " of " + (ev.task.server || "its server"));
        break;
      case "tool.progress": {
        // A running call's progress message or its task's status, until its result.
        if (!ev.call || !ev.progress) break;
        const row = chatCallRow(ev.call);
        if (!row.node.dataset.outcome) row.outcome.textContent = ev.progress.message || "";
        break;
      }
      case "tool.result": {
        if (!ev.call) break;
        const row = chatCallRow(ev.call);
        const r = ev.result || {};
        if (row.view) {
          const text = ev.message ? ev.message.content || "" : "";
          row.view.then((v) => {
            if (!v) return;
            if (r.outcome === "cancelled" || r.outcome === "aborted") v.cancelled(text);
            else v.result(r.view || { content: [{ type: "text", text }], isError: !!r.isError });
          });
        }
        row.node.dataset.outcome = r.outcome || "ok";
        row.outcome.textContent = (r.outcome || "ok") + (r.durationMs !== undefined ? " · " + r.durationMs + " ms" : "");
        const text = ev.message ? ev.message.content || "" : "";
        row.body.append(el("pre", { dataset: { part: "result" } }, text + (r.saved ? "\n(saved whole in " + r.saved + ")" : "")));
        break;
      }
      case "approval.asked": {
        const a = ev.approval || {};
        const answer = (decision) => call("agent/approve", { session: chat.session, id: a.id, decision })
          .catch((e) => chatInfo("approve: " + e.message));
        chatAppend(el("div", { class: "approval", dataset: { approval: a.id } },
          el("div", {}, a.kind === "sampling"
            ? "The server " + (a.server || "") + " asks the model for a completion."
            : "Run " + (a.tool || "a tool") + "?" + (String(a.callId || "").startsWith("view_") ? " Its interactive view calls it." : "") +
              (a.reason ? " (" + a.reason + ")" : "")),
          a.args ? el("pre", {}, prettyJSON(JSON.stringify(a.args))) : null,
          a.sampling ? samplingAsked(a.sampling) : null,
          a.preview ? previewView(a.preview) : null,
          el("div", { class: "actions" },
            el("button", { type: "button", class: "primary", dataset: { decision: "allow" }, onclick: () => answer("allow") }, "Allow once"),
            el("button", { type: "button", dataset: { decision: "allow_session" }, onclick: () => answer("allow_session") }, "Allow for this session"),
            el("button", { type: "button", dataset: { decision: "deny" }, onclick: () => answer("deny") }, "Deny"))));
        // The view follows a question still waiting (a replayed one is decided by then).
        requestAnimationFrame(() => {
          const card = document.querySelector('#chat-log [data-approval="' + CSS.escape(a.id || "") + '"]');
          if (card && card.querySelector("[data-decision]")) card.scrollIntoView({ block: "nearest" });
        });
        break;
      }
      case "approval.decided": {
        const a = ev.approval || {};
        const card = document.querySelector('#chat-log [data-approval="' + CSS.escape(a.id || "") + '"]');
        if (card) card.replaceChildren(el("div", {}, (a.tool || a.kind || "") + ": " + (a.decision || "") + (a.why ? " — " + a.why : "")));
        break;
      }
      case "compaction.start":
        chatInfo("compacting the conversation…");
        break;
      case "compaction": {
        // Where the model's view was made smaller: what it now reads instead of the older messages.
        const c = ev.compaction || {};
        chat.live = null;
        chatInfo("");
        const what = c.summary ? c.summarized + " messages summarised" : (c.pruned || []).length + " old tool results pruned";
        chatAppend(el("details", { class: "compaction", dataset: { compaction: c.trigger || "" } },
          el("summary", {}, "conversation compacted (" + (c.trigger || "") + (c.focus ? ": " + c.focus : "") + ") · " + what +
            " · about " + (c.tokensBefore || 0) + " → " + (c.tokensAfter || 0) + " tokens"),
          c.summary ? el("pre", {}, c.summary) : null));
        break;
      }
      case "error":
        chatAppend(el("div", { class: "msg error" }, ev.error || "error"));
        break;
      case "turn.end": {
        const e = ev.end || {};
        const u = e.usage || {};
        chat.live = null;
        // A turn cut short (its stream cut after part of the answer) or failed can be run
        // again: agent/retry sends its message again after what the turn added.
        const retry = e.reason === "incomplete" || e.reason === "error"
          ? el("button", { type: "button", class: "retry", dataset: { retry: "" }, onclick: (c) => chatRetry(c.currentTarget) }, "Retry")
          : null;
        chatAppend(el("div", { class: "turn-usage", dataset: { turnEnd: e.reason || "" } },
          (e.reason && e.reason !== "done" ? e.reason + " · " : "") + (e.steps || 0) + " steps · " +
          (u.promptTokens || 0) + " prompt tokens (" + (u.cacheHitTokens || 0) + " cached) · " +
          (u.completionTokens || 0) + " completion tokens" +
          (u.cost ? " · " + usd(u.cost) + " (session " + usd(chat.cost += u.cost) + ")" : ""), retry));
        chat.turnOpen = false;
        chatRunning();
        break;
      }
    }
  }

  async function main() {
    try {
      await signIn();
    } catch (e) {
      signedOut();
      return;
    }
    const resp = await fetch("/v1/methods", { credentials: "same-origin" });
    if (!resp.ok) { signedOut(); return; }
    const listing = await resp.json();
    state.methods = new Set((listing.methods || []).map((m) => m.name));
    apps.sandbox = listing.appSandbox || "";
    $("#app").hidden = false;
    if (!has("mcpManager/watch")) {
      setConn("down", "no MCP server manager");
      activity("This host has no MCP server manager (mcpManager/*): run it with the web profile.", "bad");
      return;
    }
    activity("connected to the host");
    muxConnect();
    stream("mcpManager/watch", onSnapshot);
    if (has("harness/clients")) stream("harness/clients", onClients);
    if (has("mcpManager/progress")) stream("mcpManager/progress", onProgress);
    if (has("console/elicitations")) stream("console/elicitations", onElicitation);
    if (has("prompts/watch")) stream("prompts/watch", onPromptsChanged);
    if (has("gateway/sessions")) stream("gateway/sessions", onGatewaySessions);
    chatInit();
  }
  main();
})();
