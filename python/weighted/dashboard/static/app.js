// The weighted dashboard: polls /api/state and renders it. Plain DOM and SVG, no dependencies.
"use strict";
(function () {
  const params = new URLSearchParams(location.search);
  const token = params.get("token");
  const COLORS = ["#1565c0", "#c62828", "#2e7d32", "#ef8f00", "#6a1b9a", "#00838f", "#5d4037",
                  "#ad1457", "#827717", "#37474f"];
  const replay = { cursor: null, policy: null, playing: false, duration: 0 };
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

  function renderServices(state) {
    const root = document.getElementById("services");
    root.replaceChildren();
    for (const svc of state.services) {
      const h = el("h2", { "data-service": svc.name }, "service " + svc.name + " ");
      if (svc.panic) h.appendChild(el("span", { class: "badge panic", "data-panic": "true" }, "PANIC: round-robin"));
      root.appendChild(h);
      const table = el("table", { class: "endpoints", "data-service": svc.name });
      const head = el("tr");
      for (const c of ["endpoint", "state", "weight", "target", "base", "penalty", "rules",
                       "p99 ms", "error rate", "requests"]) head.appendChild(el("th", { class: c }, c));
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
        const rules = el("td", { class: "rules" });
        for (const r of rulesText(ep)) {
          rules.appendChild(el("div", { class: r.fired ? "rule rule-fired" : "rule",
                                        "data-metric": r.metric,
                                        "data-contribution": String(r.fired ? r.contribution : 0) }, r.text));
        }
        if (ep.share !== undefined) rules.appendChild(el("div", {}, "share " + pct(ep.share)));
        tr.appendChild(rules);
        tr.appendChild(el("td", { class: "p99" }, num(ep.p99_ms, 1)));
        tr.appendChild(el("td", { class: "error-rate" }, pct(ep.error_rate)));
        tr.appendChild(el("td", { class: "requests" }, ep.requests === undefined ? "–" : String(ep.requests)));
        table.appendChild(tr);
      }
      root.appendChild(table);
    }
  }

  function renderTimeline(state) {
    const svg = document.getElementById("timeline");
    const legend = document.getElementById("legend");
    const NS = "http://www.w3.org/2000/svg";
    svg.replaceChildren();
    legend.replaceChildren();
    const t = state.timeline.t;
    const keys = Object.keys(state.timeline.series);
    if (t.length === 0) return;
    const t0 = t[0], t1 = Math.max(t[t.length - 1], t0 + 1);
    let wmax = 0;
    for (const k of keys) for (const w of state.timeline.series[k]) if (w !== null && w > wmax) wmax = w;
    if (wmax <= 0) wmax = 1;
    const W = 900, H = 260, P = 10;
    const x = (v) => P + (W - 2 * P) * (v - t0) / (t1 - t0);
    const y = (w) => H - P - (H - 2 * P) * w / wmax;
    const label = (tx, ty, text, anchor) => {
      const t = document.createElementNS(NS, "text");
      t.setAttribute("x", tx); t.setAttribute("y", ty); t.setAttribute("font-size", "11");
      t.setAttribute("fill", "#777"); t.setAttribute("text-anchor", anchor);
      t.textContent = text;
      svg.appendChild(t);
    };
    label(P + 2, P + 10, "weight " + num(wmax, 0), "start");
    label(P + 2, H - P - 2, num(t0, 0) + " s", "start");
    label(W - P - 2, H - P - 2, num(t1, 0) + " s", "end");
    for (const ev of state.events) {
      if (ev.time_s < t0 || ev.time_s > t1) continue;
      const line = document.createElementNS(NS, "line");
      line.setAttribute("x1", x(ev.time_s)); line.setAttribute("x2", x(ev.time_s));
      line.setAttribute("y1", P); line.setAttribute("y2", H - P);
      line.setAttribute("stroke", "#bbb"); line.setAttribute("stroke-dasharray", "3,3");
      line.setAttribute("class", "event-marker");
      const title = document.createElementNS(NS, "title");
      title.textContent = ev.type + " " + ev.endpoint + " @" + num(ev.time_s, 1) + " s";
      line.appendChild(title);
      svg.appendChild(line);
    }
    if (state.cursor !== undefined && t[state.cursor] !== undefined) {
      const c = document.createElementNS(NS, "line");
      c.setAttribute("x1", x(t[state.cursor])); c.setAttribute("x2", x(t[state.cursor]));
      c.setAttribute("y1", 0); c.setAttribute("y2", H); c.setAttribute("stroke", "#000");
      svg.appendChild(c);
    }
    keys.forEach((k, i) => {
      const color = COLORS[i % COLORS.length];
      const pts = [];
      state.timeline.series[k].forEach((w, j) => { if (w !== null && j < t.length) pts.push(x(t[j]) + "," + y(w)); });
      const pl = document.createElementNS(NS, "polyline");
      pl.setAttribute("points", pts.join(" "));
      pl.setAttribute("fill", "none"); pl.setAttribute("stroke", color); pl.setAttribute("stroke-width", "2");
      pl.setAttribute("data-series", k);
      svg.appendChild(pl);
      const item = el("span", { "data-series": k });
      const sw = el("i"); sw.style.background = color;
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
      li.title = JSON.stringify(ev.reason);
      list.appendChild(li);
    }
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
    renderReplayControls(state);
    renderServices(state);
    renderTimeline(state);
    renderEvents(state);
    updates += 1;
    document.body.dataset.updates = String(updates);
  }

  async function refresh() {
    const q = new URLSearchParams();
    if (replay.cursor !== null) q.set("t", String(replay.cursor));
    if (replay.policy) q.set("policy", replay.policy);
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const status = document.getElementById("status");
    try {
      const res = await fetch("api/state?" + q.toString(), { headers, cache: "no-store" });
      if (!res.ok) throw new Error("HTTP " + res.status);
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
