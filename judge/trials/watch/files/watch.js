// A campaign's live page: the state pushed by the server (Server-Sent
// Events, followed by stream.js), elapsed times ticking between pushes,
// the charts reloaded when a trial ends.
"use strict";

const $ = (id) => document.getElementById(id);
let state = null;
let skew = 0; // this clock minus the server's
let charts = "";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// clock is seconds as a person reads them: "12 s", "4:05", "1:02:03".
function clock(s) {
  s = Math.max(0, Math.floor(s));
  if (s < 60) return s + " s";
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = String(s % 60).padStart(2, "0");
  return h > 0 ? h + ":" + String(m).padStart(2, "0") + ":" + sec : m + ":" + sec;
}

function serverNow() { return Date.now() - skew; }

function elapsed(t) {
  if (t.state === "running" && t.start) return (serverNow() - Date.parse(t.start)) / 1000;
  return t.elapsed_seconds;
}

function plural(n, what) { return n + " " + what + (n === 1 ? "" : "s"); }

function slug(s) { return s.toLowerCase().replace(/[^a-z0-9.-]+/g, "-"); }

function renderGrid(s) {
  const head = $("grid").tHead, body = $("grid").tBodies[0];
  head.textContent = "";
  body.textContent = "";
  if (!s.ten) return; // a run of mutant sets alone: no tiles of the ten
  const hr = el("tr");
  hr.append(el("th", "", "defect"));
  for (const t of s.tools) {
    const th = el("th", "", t.tool);
    th.scope = "col";
    th.append(el("div", "median", t.ran + " of " + t.trials + " trials ended"));
    if (t.coverage) th.append(el("div", "coverage", t.coverage));
    hr.append(th);
  }
  head.append(hr);
  s.defects.forEach((d, i) => {
    const tr = el("tr");
    const th = el("th", "", d.id + " · " + d.title);
    th.scope = "row";
    tr.append(th);
    for (const t of s.tools) {
      const tile = t.tiles[i];
      const td = el("td", "tile" + (tile.of === 0 ? " none" : ""));
      td.id = "tile-" + slug(t.tool) + "-" + tile.id;
      td.dataset.text = tile.text;
      td.append(el("div", "k", tile.detected + "/" + tile.of), el("div", "median", tile.median));
      if (tile.spurious > 0) td.append(el("div", "spurious", tile.spurious + " spurious"));
      const bar = el("div", "bar"), fill = el("span");
      fill.style.width = (tile.of > 0 ? (100 * tile.detected) / tile.of : 0) + "%";
      bar.append(fill);
      td.append(bar);
      td.title = t.tool + ", " + d.id + ": detected in " + tile.detected + " of " + tile.of + " trials ended; median time to detect " + tile.median +
        (tile.spurious > 0 ? "; " + tile.spurious + " spurious finding(s), never a detection" : "");
      tr.append(td);
    }
    body.append(tr);
  });
}

function renderMutation(s) {
  $("ten").hidden = !s.ten && s.trials.length > 0;
  $("mutation").hidden = s.mutation.length === 0;
  const body = $("mutation-table").tBodies[0];
  body.textContent = "";
  for (const m of s.mutation) {
    const tr = el("tr");
    tr.id = "mutation-" + slug(m.tool);
    const th = el("th", "", m.tool);
    th.scope = "row";
    tr.append(th, el("td", "n", String(m.trials)), el("td", "score", m.score),
      el("td", "n not-reached", String(m.not_reached)), el("td", "n not-triggered", String(m.reached_never_triggered)),
      el("td", "n not-reported", String(m.triggered_not_reported)));
    body.append(tr);
  }
}

function coverageWords(c) {
  return c ? " · coverage " + c.targets + "/" + c.of + " · TCL " + c.tcl : "";
}

// On a cluster, the attempts lost so far (their Pods evicted or gone
// with their nodes, never scored): "" when none was.
function lostWords(t) {
  const lost = (t.attempts || []).filter((a) => a.ended === "lost");
  if (lost.length === 0) return "";
  const last = lost[lost.length - 1];
  return " · " + lost.length + (lost.length === 1 ? " attempt" : " attempts") + " lost, not scored (attempt " + last.attempt + (last.node ? " on " + last.node : "") + ": " + last.why + ")";
}

function trialWords(t) {
  const lost = lostWords(t);
  switch (t.state) {
    case "running": {
      const budget = t.budget_seconds ? " of " + clock(t.budget_seconds) : "";
      const live = t.live ? "reached " + t.live.reached.length + " · triggered " + t.live.triggered.length + " · " + t.live.requests.toLocaleString("en") + " requests" + coverageWords(t.live.coverage) : "starting…";
      if (!t.start) return [lost ? "running: waiting for its next attempt" : "running: starting", (lost ? "its next Pod" : "its instance starting") + lost];
      return ["running " + clock(elapsed(t)) + budget, live + lost];
    }
    case "ended":
      return ["ended: " + t.outcome, "detected " + t.detected + (t.spurious ? " (" + t.spurious + " spurious)" : "") + " in " + clock(t.seconds) + coverageWords(t.coverage) + lost];
    case "not run":
      return ["not run", t.not_run + lost];
    case "cancelled":
      return ["cancelled", "the run was interrupted before it started"];
  }
  return ["queued", "seed " + t.seed];
}

function renderTrials(s) {
  const root = $("trials");
  root.textContent = "";
  for (const tool of s.tools) {
    const box = el("section", "tool");
    box.setAttribute("aria-label", tool.tool);
    const c = tool.counts;
    box.append(el("h3", "", tool.tool + ": " + c.ended + " ended, " + c.running + " running, " + c.queued + " queued" +
      (c["not run"] ? ", " + c["not run"] + " not run" : "") + (c.cancelled ? ", " + c.cancelled + " cancelled" : "")));
    const list = el("ul", "trials");
    for (const t of s.trials.filter((x) => x.tool === tool.tool)) {
      const li = el("li", "trial " + slug(t.state));
      li.id = "trial-" + slug(t.tool) + "-" + t.trial;
      li.dataset.state = t.state;
      const [head, detail] = trialWords(t);
      li.append(el("div", "", "#" + t.trial), el("div", "state", head), el("div", t.state === "running" ? "live" : "outcome", detail));
      list.append(li);
    }
    box.append(list);
    root.append(box);
  }
}

function renderCharts(s) {
  // A run of mutant sets alone has no step chart of the ten: the section
  // holds its coverage's growth, where it records coverage.
  $("over-time").hidden = !s.ten && !s.coverage;
  $("no-charts").hidden = s.charts !== "";
  $("step-figure").hidden = !s.step;
  $("cd-figure").hidden = !s.cd;
  $("coverage-figure").hidden = !s.coverage;
  if (s.charts !== "" && s.charts !== charts) {
    charts = s.charts;
    if (s.step) $("step").src = "chart.svg?k=" + encodeURIComponent(charts);
    if (s.cd) $("cd").src = "cd.svg?k=" + encodeURIComponent(charts);
    if (s.coverage) $("coverage").src = "coverage.svg?k=" + encodeURIComponent(charts);
  }
}

function tick() {
  if (!state) return;
  const s = state;
  const end = s.end ? Date.parse(s.end) : serverNow();
  $("runtime").textContent = s.start ? clock((end - Date.parse(s.start)) / 1000) : "—";
  for (const t of s.trials) {
    if (t.state !== "running") continue;
    const li = $("trial-" + slug(t.tool) + "-" + t.trial);
    if (li) li.querySelector(".state").textContent = trialWords(t)[0];
  }
}

function render(s) {
  state = s;
  skew = Date.now() - Date.parse(s.now);
  const total = s.trials.length;
  $("ended").textContent = (s.counts.ended + s.counts["not run"]) + " of " + total;
  $("running").textContent = String(s.counts.running);
  $("queued").textContent = String(s.counts.queued);
  $("where").textContent = s.where ? s.where + (s.run ? " (run " + s.run + ")" : "") : "—";
  $("folder").textContent = s.folder;
  $("summary").textContent = s.problem ? s.problem :
    s.ended ? "The run has ended" + (s.report ? ": its report is written." : ".") :
    plural(s.counts.running, "trial") + " running, " + s.counts.queued + " queued.";
  $("report-link").hidden = !s.report;
  document.title = (s.ended ? "Ended" : s.counts.ended + "/" + total) + " · a campaign, live";
  renderGrid(s);
  renderMutation(s);
  renderTrials(s);
  renderCharts(s);
  tick();
}

function larger(on) {
  document.documentElement.classList.toggle("larger", on);
  $("larger").setAttribute("aria-pressed", String(on));
}

setInterval(tick, 1000);

$("larger").addEventListener("click", () => larger($("larger").getAttribute("aria-pressed") !== "true"));
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || e.target.closest("input, textarea")) return;
  if (e.key === "l" || e.key === "L") larger($("larger").getAttribute("aria-pressed") !== "true");
  if ((e.key === "r" || e.key === "R") && state && state.report) window.location.href = "report.html";
});
fetch("state").then((r) => r.json()).then(render).catch(() => {});
follow("events", $("conn"), render); // stream.js
