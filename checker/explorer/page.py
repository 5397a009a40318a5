"""The explorer's page: one self-contained HTML document (inline style and script, nothing
fetched from the network) that asks the server for the current state and draws it.

Element ids the tests read: ``#title``, ``#depth``, ``#path`` (one ``li`` per step taken),
``#actions`` (one ``button.action`` per action instance, ``data-index``, disabled when not
enabled), ``#violations`` (one ``li.violated`` per violated property, ``data-property``),
``#reached``, ``#healthy``, ``#vars`` (one row per variable, ``data-var``, ``tr.changed`` for
what the last step changed, the value in ``td.value``), ``#trace`` (one ``li`` per state of a
loaded trace, ``a.jump`` with ``data-index``), ``#view`` (the protocol's drawing, framed),
``#error`` (the last refused request).
"""

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>hwcheck explore</title>
<style>
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 16px;
       color: #222; }
h1 { font-size: 18px; margin: 0 0 6px 0; }
#bar { display: flex; gap: 8px; align-items: center; margin: 6px 0 10px 0; }
#bar button { font-size: 13px; }
#main { display: flex; gap: 16px; align-items: flex-start; }
#side { width: 300px; flex: none; }
#side h2, #centre h2 { font-size: 14px; margin: 12px 0 4px 0; }
#actions { display: flex; flex-wrap: wrap; gap: 4px; }
button.action { font-family: monospace; font-size: 12px; padding: 3px 6px; cursor: pointer;
                border: 1px solid #2a9d8f; background: #e8f6f3; border-radius: 3px; }
button.action:disabled { border-color: #ccc; background: #f4f4f4; color: #aaa;
                         cursor: default; }
button.action.warn { border-color: #d00; }
ol#path, ol#trace { font-family: monospace; font-size: 12px; padding-left: 24px; margin: 0; }
ol#trace li.here { background: #ffe066; }
ul#violations, ul#reached { font-size: 13px; padding-left: 18px; margin: 0; }
li.violated { color: #b00; font-weight: bold; }
#healthy { font-size: 13px; }
table#vars { border-collapse: collapse; font-family: monospace; font-size: 12px; }
table#vars th, table#vars td { border: 1px solid #ccc; padding: 2px 6px; text-align: left;
                               vertical-align: top; }
table#vars tr.changed td { background: #ffe066; }
#centre { flex: 1; min-width: 0; }
iframe#view { width: 100%; height: 520px; border: 1px solid #ccc; }
#error { color: #b00; font-size: 13px; min-height: 1em; }
.muted { color: #888; }
</style>
</head>
<body>
<h1 id="title">hwcheck explore</h1>
<div id="bar">
  <button id="back" type="button">&larr; back</button>
  <button id="reset" type="button">reset</button>
  <select id="initial" title="the initial state to start from" hidden></select>
  <span>depth <b id="depth">0</b></span>
  <span id="error" role="alert"></span>
</div>
<div id="main">
  <div id="side">
    <h2>Enabled actions (click to take one)</h2>
    <div id="actions"></div>
    <h2>Properties the current state violates</h2>
    <ul id="violations"></ul>
    <div id="healthy"></div>
    <h2>Reachability checks it satisfies</h2>
    <ul id="reached"></ul>
    <h2>Path from the start</h2>
    <ol id="path"></ol>
    <div id="trace-box" hidden>
      <h2 id="trace-title">Trace</h2>
      <ol id="trace" start="0"></ol>
    </div>
  </div>
  <div id="centre">
    <h2>Current state</h2>
    <iframe id="view" title="the current state, drawn by the protocol"></iframe>
    <h2>Variables</h2>
    <table id="vars"></table>
  </div>
</div>
<script>
"use strict";
let current = null;

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function show(v) {
  if (Array.isArray(v)) return "[" + v.map(show).join(" ") + "]";
  return String(v);
}

async function call(method, url, body) {
  const opts = {method: method, headers: {}};
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(url, opts);
  const data = await r.json();
  if (!r.ok) {
    document.getElementById("error").textContent = data.error || ("HTTP " + r.status);
    return null;
  }
  document.getElementById("error").textContent = "";
  render(data);
  return data;
}

function render(s) {
  current = s;
  document.getElementById("title").textContent = s.title;
  document.title = "hwcheck explore: " + s.title;
  document.getElementById("depth").textContent = s.depth;
  const pick = document.getElementById("initial");
  pick.hidden = s.initials < 2;
  if (pick.options.length !== s.initials) {
    pick.replaceChildren(...Array.from({length: s.initials}, (_, k) => {
      const o = document.createElement("option");
      o.value = k;
      o.textContent = "initial state " + k;
      return o;
    }));
  }
  if (s.initial !== null) pick.value = s.initial;
  document.body.setAttribute("data-version", s.version);
  document.body.setAttribute("data-depth", s.depth);
  const acts = document.getElementById("actions");
  acts.replaceChildren();
  for (const a of s.actions) {
    const b = el("button", {"class": "action", "type": "button", "data-index": a.index,
                            "data-label": a.label}, a.label);
    if (!a.enabled) b.disabled = true;
    if (a.refused) b.title = "leaves the declared domains: " + a.refused;
    if (a.disagreement) { b.classList.add("warn"); b.title = a.disagreement; }
    b.addEventListener("click", () => call("POST", "/api/step", {action: a.index}));
    acts.appendChild(b);
  }
  const viol = document.getElementById("violations");
  viol.replaceChildren();
  const bad = s.properties.invariants.concat(s.properties.actions);
  for (const p of bad) viol.appendChild(el("li", {"class": "violated", "data-property": p}, p));
  for (const e of s.properties.errors) viol.appendChild(el("li", {"class": "violated"}, e));
  if (!bad.length && !s.properties.errors.length)
    viol.appendChild(el("li", {"class": "muted"}, "none"));
  const healthy = document.getElementById("healthy");
  healthy.textContent = s.properties.healthy === undefined ? "" :
    (s.properties.healthy ? "healthy: yes (the protocol's healthy predicate holds)"
                          : "healthy: no");
  const reached = document.getElementById("reached");
  reached.replaceChildren();
  for (const p of s.properties.reached) reached.appendChild(el("li", {"data-property": p}, p));
  if (!s.properties.reached.length) reached.appendChild(el("li", {"class": "muted"}, "none"));
  const path = document.getElementById("path");
  path.replaceChildren();
  s.path.forEach((label, i) => path.appendChild(el("li", {"data-step": i + 1}, label)));
  const vars = document.getElementById("vars");
  vars.replaceChildren();
  for (const [k, v] of Object.entries(s.state)) {
    const tr = el("tr", {"data-var": k});
    if (s.changed.includes(k)) tr.classList.add("changed");
    tr.appendChild(el("th", {}, k));
    tr.appendChild(el("td", {"class": "value"}, show(v)));
    vars.appendChild(tr);
  }
  const box = document.getElementById("trace-box");
  const trace = document.getElementById("trace");
  trace.replaceChildren();
  if (s.trace) {
    box.hidden = false;
    document.getElementById("trace-title").textContent =
      "Trace " + s.trace.name + (s.trace.property ? " (" + s.trace.property + ")" : "") +
      (s.trace.cti ? ": a counterexample to induction" : "");
    s.trace.steps.forEach((label, i) => {
      const li = el("li", {"data-index": i});
      if (s.trace.at === i) li.classList.add("here");
      const a = el("a", {"class": "jump", "href": "#", "data-index": i}, label);
      a.addEventListener("click", (ev) => { ev.preventDefault();
                                            call("POST", "/api/jump", {index: i}); });
      li.appendChild(a);
      trace.appendChild(li);
    });
  } else {
    box.hidden = true;
  }
  document.getElementById("view").src = "/view?v=" + s.version;
}

// the current state is the last row of the framed page: keep it in sight
document.getElementById("view").addEventListener("load", () => {
  const w = document.getElementById("view").contentWindow;
  if (w) w.scrollTo(0, w.document.documentElement.scrollHeight);
});

document.getElementById("back").addEventListener("click", () => call("POST", "/api/back", {}));
document.getElementById("reset").addEventListener("click", () => call("POST", "/api/reset", {
  initial: Number(document.getElementById("initial").value || 0)}));
document.getElementById("initial").addEventListener("change", (e) => call("POST", "/api/reset", {
  initial: Number(e.target.value)}));
call("GET", "/api/state");
</script>
</body>
</html>
"""
