// The live board: the state pushed by the server (Server-Sent Events,
// followed by stream.js), the reset, and a report dropped or picked,
// scored by the server.
"use strict";

const categoryTitles = {
  security: "Security", errors: "Internal server errors",
  conformance: "Response conformance", performance: "Performance",
};
const $ = (id) => document.getElementById(id);
let built = false;
// The page at /?scope=deployment shows (and resets, and scores against)
// every replica of the deployment, merged; the plain page this instance.
const scope = new URLSearchParams(location.search).get("scope") === "deployment" ? "deployment" : "";
const scoped = (url) => scope ? url + (url.includes("?") ? "&" : "?") + "scope=" + scope : url;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function seconds(from, to) {
  const s = (Date.parse(to) - Date.parse(from)) / 1000;
  return s < 1 ? Math.round(s * 1000) + " ms" : s.toFixed(1) + " s";
}

// build makes a tile per defect, by category, once.
function build(truth) {
  const root = $("categories");
  root.textContent = "";
  for (const cat of Object.keys(categoryTitles)) {
    // With a mutant set the ten are off by setting: the tiles are the mutants'.
    const mutants = truth.defects.some((d) => d.operator);
    const defects = truth.defects.filter((d) => d.category === cat && (d.active || !mutants));
    if (defects.length === 0) continue;
    const sec = el("section", "category");
    sec.setAttribute("aria-label", categoryTitles[cat]);
    sec.append(el("h2", "", categoryTitles[cat]));
    const list = el("ul", "tiles");
    for (const d of defects) {
      const li = el("li", "tile not-reached");
      li.id = "tile-" + d.id;
      const name = d.operator ? d.operator + " · " + d.condition + " (depth " + d.depth + ")" : d.id + " · " + d.title;
      li.append(el("div", "state", ""), el("div", "title", name),
        el("div", "op", d.operation.method + " " + d.operation.path),
        el("div", "counts", ""), el("div", "when", ""));
      list.append(li);
    }
    sec.append(list);
    root.append(sec);
  }
  built = true;
}

function stateOf(d) {
  if (!d.active) return ["off", "switched off"];
  if (d.exposure && d.exposure.count > 0) return ["triggered", "triggered"];
  if (d.reached && d.reached.count > 0) return ["reached", "reached"];
  return ["not-reached", "not reached"];
}

function render(s) {
  $("mode").textContent = s.mode;
  if (s.error) {
    // A part of the deployment is not shown as the whole: the tiles are
    // hidden until every replica answers again.
    $("categories").hidden = true;
    $("summary").className = "summary error";
    $("summary").textContent = "The deployment's counts are not shown: " + s.error;
    return;
  }
  $("categories").hidden = false;
  $("summary").className = "summary";
  const t = s.truth;
  if (!built) build(t);
  $("requests").textContent = t.requests === undefined ? "—" : t.requests.toLocaleString("en");
  $("rate").textContent = s.rate_window_seconds > 0 ? s.rate.toFixed(1) + " /s" : "—";
  $("since").textContent = t.exposure_since ? new Date(t.exposure_since).toLocaleTimeString() : "—";
  $("setting").textContent = t.setting;
  $("version").textContent = s.version;
  let triggered = 0;
  const operations = new Set(), reached = new Set();
  for (const d of t.defects) {
    const op = d.operation.method + " " + d.operation.path;
    operations.add(op);
    if (d.reached && d.reached.count > 0) reached.add(op);
    const tile = $("tile-" + d.id);
    if (!tile) continue;
    const [cls, words] = stateOf(d);
    tile.className = "tile " + cls;
    tile.querySelector(".state").textContent = words;
    const r = d.reached || { count: 0, by_status: {}, other_methods: 0 };
    if (d.exposure && d.exposure.count > 0) triggered++;
    const bs = r.by_status || {};
    tile.querySelector(".counts").textContent = r.count + (r.count === 1 ? " request: " : " requests: ") +
      ["2xx", "3xx", "4xx", "5xx"].map((k) => (bs[k] || 0) + " " + k).join(", ") +
      (r.no_answer ? ", " + r.no_answer + " given up on before an answer" : "") +
      (r.other_methods ? "; " + r.other_methods + " with another method" : "");
    const when = [];
    if (r.first) when.push("first reached +" + seconds(t.exposure_since, r.first) + (r.first_request ? ", request #" + r.first_request : ""));
    if (d.exposure && d.exposure.first) when.push("first triggered +" + seconds(t.exposure_since, d.exposure.first) + (d.exposure.first_request ? ", request #" + d.exposure.first_request : "") + " (" + d.exposure.count + "×)");
    tile.querySelector(".when").textContent = when.join("; ");
  }
  $("summary").textContent = triggered + " of " + t.active.length + " active defects triggered, " + reached.size + " of " + operations.size + " operations reached.";
}

async function reset() {
  const b = $("reset");
  b.disabled = true;
  try {
    const res = await fetch(scoped("defects/reset"), { method: "POST" });
    if (!res.ok) throw new Error((await res.json()).error || res.statusText);
  } catch (err) {
    $("summary").textContent = "The reset failed: " + err.message;
  } finally {
    b.disabled = false;
  }
}

async function score(file) {
  const box = $("scored");
  box.hidden = false;
  $("scored-title").textContent = "Report: " + file.name;
  $("scored-headline").textContent = "scoring…";
  $("scored-headline").className = "headline";
  $("scored-notes").textContent = "";
  $("scored-rows").textContent = "";
  try {
    const res = await fetch(scoped("board/score?name=" + encodeURIComponent(file.name)), { method: "POST", body: file });
    const body = await res.json();
    if (!res.ok) {
      $("scored-headline").className = "headline error";
      $("scored-headline").textContent = "Not scored: " + (body.error || res.statusText);
      return;
    }
    $("scored-headline").textContent = body.scorecard.tool + ": " + body.headline;
    for (const n of body.notes) $("scored-notes").append(el("li", "", n));
    for (const v of body.verdicts) {
      const tr = el("tr");
      tr.id = "verdict-" + v.id;
      tr.append(el("td", "", v.id + " · " + v.title), el("td", "verdict", v.verdict), el("td", "", String(v.findings)));
      $("scored-rows").append(tr);
    }
    const tr = el("tr");
    tr.append(el("td", "", "not planted"), el("td", "verdict", unplantedText(body.unplanted)), el("td", "", String(body.unplanted)));
    $("scored-rows").append(tr);
  } catch (err) {
    $("scored-headline").className = "headline error";
    $("scored-headline").textContent = "Not scored: " + err.message;
  } finally {
    box.focus();
  }
}

function unplantedText(n) { return n === 0 ? "none" : n + " findings on no planted defect"; }

function setup() {
  $("reset").addEventListener("click", reset);
  $("report").addEventListener("change", (e) => { if (e.target.files.length) score(e.target.files[0]); e.target.value = ""; });
  const zone = $("dropzone");
  let depth = 0;
  document.addEventListener("dragenter", (e) => { e.preventDefault(); depth++; zone.hidden = false; });
  document.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; zone.hidden = true; } });
  document.addEventListener("dragover", (e) => e.preventDefault());
  document.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    zone.hidden = true;
    if (e.dataTransfer.files.length) score(e.dataTransfer.files[0]);
  });
  if (scope) {
    $("run-title").textContent = "This deployment";
    document.title += " (deployment)";
  }
  fetch(scoped("board/state")).then((r) => r.json()).then(render).catch(() => {});
  follow(scoped("board/events"), $("conn"), render); // stream.js
}

setup();
