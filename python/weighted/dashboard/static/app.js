// The weighted console: polls api/state and renders it. Plain DOM and SVG (plot.js), no
// dependencies.
"use strict";
(function () {
  const params = new URLSearchParams(location.search);
  const token = params.get("token");
  const replay = { cursor: null, policy: null, playing: false, duration: 0 };
  let file = params.get("file");
  let updates = 0;

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function num(v, digits) {
    return v === null || v === undefined ? "–" : Number(v).toFixed(digits);
  }
  function pct(v) { return v === null || v === undefined ? "–" : (100 * v).toFixed(2) + "%"; }
  function short(v) {
    return v === null || v === undefined ? "n/a" : typeof v === "number" ? Number(v).toPrecision(3) : String(v);
  }

  function rulesText(ep) {
    const parts = [];
    for (const r of ep.rules || []) {
      const label = r.metric + " " + (r.value === null ? "n/a" : Number(r.value).toPrecision(3)) +
                    (r.fired ? " > " : " ≤ ") + Number(r.threshold).toPrecision(3);
      parts.push({ text: label + (r.fired ? " (+" + num(r.contribution, 2) + ")" : ""),
                   fired: r.fired, metric: r.metric, contribution: r.contribution });
    }
    return parts;
  }

  // One line per reason: "rule error_rate 0.333 > 0.01 → 0.5".
  function reasonText(r) {
    let s = (r.kind || "") + " " + (r.name || "");
    if (r.value !== undefined) s += " " + short(r.value);
    if (r.threshold !== undefined && r.threshold !== null) s += " > " + short(r.threshold);
    if (r.effect !== undefined && r.effect !== null) s += " → " + short(r.effect);
    return s.trim();
  }

  // An event's reason object from the engine ({"rules": [...], "penalty": ...}) as short text.
  function eventReason(reason) {
    if (!reason || typeof reason !== "object") return "";
    const parts = [];
    for (const r of reason.rules || []) {
      parts.push((r.metric || r.name) + " " + short(r.value) + " > " + short(r.threshold));
    }
    for (const r of reason.reasons || []) parts.push(reasonText(r));
    for (const [k, v] of Object.entries(reason)) {
      if (k !== "rules" && k !== "reasons" && typeof v !== "object") parts.push(k + " " + short(v));
    }
    return parts.join(", ");
  }

  // The error budget: observed rate against the budget over its window, and the failure price
  // the engine set to hold it; "cannot be met" when over it and no price meets it (at the
  // highest price, or while the engine minimises errors).
  function budgetBadge(b) {
    const pct = (x) => (x === null ? "?" : (100 * x).toFixed(2) + "%");
    const verdict = b.met ? "met" : (b.limited ? "cannot be met" : "over");
    const text = "error budget " + pct(b.max_error_rate) + ": " + pct(b.observed_error_rate) +
        " over " + ((b.window_ms || 0) / 1000) + " s, " + verdict + " (error cost " +
        (b.error_cost === null ? "?" : b.error_cost.toPrecision(3)) + ")";
    return el("span", { class: "badge budget budget-" + (b.met ? "met" : "missed"),
                        "data-budget": verdict }, text);
  }

  function renderServices(state) {
    const root = document.getElementById("services");
    root.replaceChildren();
    for (const svc of state.services) {
      const h = el("h2", { "data-service": svc.name }, "service " + svc.name + " ");
      if (svc.panic) h.appendChild(el("span", { class: "badge panic", "data-panic": "true" }, "PANIC: round-robin"));
      if (svc.budget) h.appendChild(budgetBadge(svc.budget));
      root.appendChild(h);
      const table = el("table", { class: "endpoints", "data-service": svc.name });
      const head = el("tr");
      for (const c of ["endpoint", "state", "weight", "target", "base", "penalty", "share",
                       "reasons", "rules", "p99 ms", "error rate", "requests"]) {
        head.appendChild(el("th", { class: c }, c));
      }
      table.appendChild(head);
      for (const ep of svc.endpoints) {
        const shown = svc.panic ? "panic" : ep.state;
        const tr = el("tr", { "data-endpoint": svc.name + "/" + ep.id, "data-state": shown });
        tr.appendChild(el("td", { class: "id" }, ep.id));
        const st = el("td", { class: "state" });
        st.appendChild(el("span", { class: "badge state-" + shown }, shown));
        if (svc.panic) st.appendChild(document.createTextNode(" (" + ep.state + ")"));
        tr.appendChild(st);
        tr.appendChild(el("td", { class: "weight" }, num(ep.weight, 2)));
        tr.appendChild(el("td", { class: "target" }, num(ep.target, 2)));
        tr.appendChild(el("td", { class: "base" }, num(ep.base_weight, 2)));
        tr.appendChild(el("td", { class: "penalty" }, num(ep.penalty, 2)));
        const share = el("td", { class: "share", "data-share": String(ep.share),
                                 "data-measured": String(ep.measured_share),
                                 "data-source": ep.share_source || "" },
                         pct(ep.share) + (ep.measured_share === null || ep.measured_share === undefined
                                          ? "" : " (measured " + pct(ep.measured_share) + ")"));
        tr.appendChild(share);
        const reasons = el("td", { class: "reasons" });
        for (const r of ep.reasons || []) {
          reasons.appendChild(el("div", { class: "reason", "data-kind": r.kind || "",
                                          "data-name": r.name || "" }, reasonText(r)));
        }
        tr.appendChild(reasons);
        const rules = el("td", { class: "rules" });
        for (const r of rulesText(ep)) {
          rules.appendChild(el("div", { class: r.fired ? "rule rule-fired" : "rule",
                                        "data-metric": r.metric,
                                        "data-contribution": String(r.fired ? r.contribution : 0) }, r.text));
        }
        tr.appendChild(rules);
        tr.appendChild(el("td", { class: "p99" }, num(ep.p99_ms, 1)));
        tr.appendChild(el("td", { class: "error-rate" }, pct(ep.error_rate)));
        tr.appendChild(el("td", { class: "requests" }, ep.requests === undefined || ep.requests === null ? "–" : String(ep.requests)));
        table.appendChild(tr);
      }
      root.appendChild(table);
    }
  }

  function renderPlots(state) {
    const tl = state.timeline || { t: [], series: {}, share: {} };
    const keys = window.weightedPlot.draw(document.getElementById("timeline"), {
      t: tl.t, series: tl.series, events: state.events, cursor: state.cursor, yLabel: "weight",
      format: (v) => String(Number(v.toPrecision(3))) });
    window.weightedPlot.draw(document.getElementById("shares"), {
      t: tl.t, series: tl.share || {}, events: state.events, cursor: state.cursor, yMax: 1,
      yLabel: "share", format: (v) => (100 * v).toFixed(0) + "%" });
    const sources = new Set();
    for (const svc of state.services) for (const ep of svc.endpoints) sources.add(ep.share_source);
    document.getElementById("share-source").textContent =
      sources.has("derived") ? "(derived from the weights: the engine reports no share)" : "";
    const legend = document.getElementById("legend");
    legend.replaceChildren();
    keys.forEach((k, i) => {
      const item = el("span", { "data-series": k });
      const sw = el("i"); sw.style.background = window.weightedPlot.colorOf(i);
      item.appendChild(sw); item.appendChild(document.createTextNode(k));
      legend.appendChild(item);
    });
  }

  function renderEvents(state) {
    const list = document.getElementById("events");
    list.replaceChildren();
    for (const ev of state.events.slice().reverse()) {
      const weights = ev.old_weight === null || ev.old_weight === undefined ? "" :
        " weight " + num(ev.old_weight, 2) + " → " + num(ev.new_weight, 2);
      const li = el("li", { "data-type": ev.type, "data-endpoint": ev.endpoint },
                    num(ev.time_s, 1) + " s  " + ev.type + "  " + ev.service + "/" + ev.endpoint + weights);
      const why = eventReason(ev.reason);
      if (why) li.appendChild(el("span", { class: "reason-text" }, why));
      li.title = JSON.stringify(ev.reason);
      list.appendChild(li);
    }
  }

  function renderWriter(state) {
    const w = document.getElementById("writer");
    if (!state.writer) { w.hidden = true; return; }
    w.hidden = false;
    const age = state.writer.age_ms === undefined ? "" : ", written " + num(state.writer.age_ms / 1000, 1) + " s ago";
    w.textContent = "writer pid " + state.writer.pid + " " + state.writer.state + age;
    w.className = state.writer.state;
    w.dataset.state = state.writer.state;
  }

  function renderFiles(state) {
    const box = document.getElementById("file-controls");
    if (!state.files) { box.hidden = true; return; }
    box.hidden = false;
    const sel = document.getElementById("file");
    sel.replaceChildren();
    for (const f of state.files) {
      sel.appendChild(el("option", { value: f.name },
                         f.name + " — " + f.service + " pid " + f.pid + " " + f.state));
    }
    if (state.file) sel.value = state.file;
    sel.onchange = () => { file = sel.value; refresh(); };
  }

  function renderReplayControls(state) {
    const box = document.getElementById("replay-controls");
    if (state.mode !== "replay") { box.hidden = true; return; }
    box.hidden = false;
    const sel = document.getElementById("policy");
    if (sel.options.length === 0) {
      for (const p of state.policies) sel.appendChild(el("option", { value: p }, p));
      sel.value = state.policy;
      sel.onchange = () => { replay.policy = sel.value; refresh(); };
    }
    const cur = document.getElementById("cursor");
    cur.max = String(Math.max(0, state.duration_s - 1));
    if (replay.cursor === null) replay.cursor = state.cursor;
    cur.value = String(state.cursor);
    cur.oninput = () => { replay.cursor = Number(cur.value); refresh(); };
    replay.duration = state.duration_s;
  }

  function render(state) {
    document.getElementById("title").textContent = state.title;
    document.getElementById("mode").textContent = state.mode;
    document.getElementById("time").textContent = num(state.time_s, 1);
    document.getElementById("clock").textContent = state.clock || "–";
    document.getElementById("clock-wrap").hidden = state.mode === "replay";
    renderWriter(state);
    renderFiles(state);
    renderReplayControls(state);
    renderServices(state);
    renderPlots(state);
    renderEvents(state);
    updates += 1;
    document.body.dataset.updates = String(updates);
  }

  async function refresh() {
    const q = new URLSearchParams();
    if (replay.cursor !== null) q.set("t", String(replay.cursor));
    if (replay.policy) q.set("policy", replay.policy);
    if (file) q.set("file", file);
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const status = document.getElementById("status");
    try {
      const res = await fetch("api/state?" + q.toString(), { headers, cache: "no-store" });
      if (!res.ok) {
        let why = "";
        try { why = (await res.json()).error || ""; } catch (e) { /* not JSON */ }
        throw new Error("HTTP " + res.status + (why ? ": " + why : ""));
      }
      render(await res.json());
      status.textContent = "live"; status.className = "status ok";
    } catch (e) {
      status.textContent = "disconnected (" + e.message + ")"; status.className = "status error";
    }
  }

  document.getElementById("play").addEventListener("click", () => {
    replay.playing = !replay.playing;
    document.getElementById("play").textContent = replay.playing ? "pause" : "play";
    if (replay.playing && replay.cursor >= replay.duration - 1) replay.cursor = 0;
  });
  setInterval(() => {
    if (replay.playing) {
      replay.cursor = Math.min((replay.cursor || 0) + 1, replay.duration - 1);
      if (replay.cursor >= replay.duration - 1) replay.playing = false;
    }
    refresh();
  }, 500);
  refresh();
})();
