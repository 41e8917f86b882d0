// fathom serve: the web UI. Plain JavaScript, no build step; charts with the vendored
// uPlot. Every chart is drawn from the chart model the server sends (package chart),
// which is the one the static report draws as SVG.
"use strict";

const main = document.getElementById("main");
let info = { writable: false };
let cleanup = []; // run when the page changes (live streams, resize handlers)
window.fathomCharts = []; // the charts on the page

// ---------- helpers ----------

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

async function api(path, opts) {
  const r = await fetch(path, opts);
  let body;
  try { body = await r.json(); } catch (e) { throw new Error(`${path}: ${r.status} ${r.statusText}`); }
  if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`);
  return body;
}

// fixed is v.toFixed(d) with exact ties rounded to even, as Go's strconv rounds them,
// so that the UI and the static report print the same digits (158.5 is 158 in both).
function fixed(v, d) {
  const s = v.toFixed(d);
  if (Math.abs(v) >= 1e21) return s;
  const exact = Math.abs(v).toFixed(100), dot = exact.indexOf(".");
  if (!/^50*$/.test(exact.slice(dot + 1 + d))) return s;
  const lo = exact.slice(0, d > 0 ? dot + 1 + d : dot); // the magnitude truncated
  const even = Number(lo[lo.length - 1]) % 2 === 0 ? lo : (Number(lo) + Math.pow(10, -d)).toFixed(d);
  return (v < 0 ? "-" : "") + even;
}

// num shows three significant digits, as the reports do.
function num(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (!Number.isFinite(v)) return "∞";
  if (v === 0) return "0";
  const a = Math.abs(v);
  const digits = Math.max(0, 2 - Math.floor(Math.log10(a)));
  let s = fixed(v, Math.min(digits, 12));
  if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
  return s === "-0" ? "0" : s;
}

function ms(v) {
  if (v === null || v === undefined) return "–";
  if (v > 0 && v < 1) return num(v * 1000) + " µs";
  if (v >= 1000) return num(v / 1000) + " s";
  return num(v) + " ms";
}

function rate(v) {
  if (v === null || v === undefined) return "–";
  if (Math.abs(v) >= 1e6) return num(v / 1e6) + "M";
  if (Math.abs(v) >= 1e4) return num(v / 1e3) + "K";
  return num(v);
}

function when(t) {
  if (!t || t.startsWith("0001-")) return "–";
  const d = new Date(t);
  return d.toISOString().slice(0, 16).replace("T", " ") + "Z";
}

function secs(s) {
  if (!s) return "–";
  if (s < 120) return num(s) + " s";
  if (s < 7200) return num(s / 60) + " min";
  return num(s / 3600) + " h";
}

function statusCell(status, reason) {
  return el("td", { class: "status-" + status, title: reason || undefined }, status);
}

function labelsOf(labels) {
  return Object.entries(labels || {}).map(([k, v]) => el("span", { class: "label" }, `${k}=${v}`));
}

function parseHash() {
  const h = location.hash.replace(/^#\/?/, "") || "runs";
  const [path, qs] = h.split("?");
  return { parts: path.split("/"), q: new URLSearchParams(qs || "") };
}

function go(path, q) {
  const s = q && [...q].length ? "?" + q.toString() : "";
  location.hash = "#/" + path + s;
}

// show replaces the page's content, leaving out null and false.
function show(...kids) { main.replaceChildren(...kids.flat(Infinity).filter(k => k !== null && k !== undefined && k !== false)); }

function showError(e) {
  show(el("p", { class: "error", role: "alert" }, e.message || String(e)));
}

// ---------- charts ----------

const NINES_MAX = 7;
const ninesX = p => (p >= 100 ? NINES_MAX : Math.min(NINES_MAX, -Math.log10(1 - p / 100)));
function ninesLabel(x) {
  if (x === 0) return "0%";
  const k = Math.round(x);
  if (Math.abs(x - k) < 1e-9 && k >= 1) return k === 1 ? "90%" : k === 2 ? "99%" : "99." + "9".repeat(k - 2) + "%";
  return num(100 * (1 - Math.pow(10, -x))) + "%";
}

// A group of time charts zooms together: a range picked on one applies to all.
class ZoomGroup {
  constructor() { this.charts = []; this.others = []; this.busy = false; this.range = null; }
  add(u) { this.charts.push(u); }
  set(min, max, from) {
    if (this.busy) return;
    this.busy = true;
    this.range = min === null ? null : [min, max];
    for (const u of this.charts) if (u !== from) u.setScale("x", { min, max });
    this.busy = false;
  }
  reset() {
    this.range = null;
    if (this.onreset) this.onreset(); // the whole run's data back (a zoom may have fetched a window's)
    for (const u of this.charts) u.__reset();
  }
  destroy() {
    const all = [...this.charts, ...this.others];
    for (const u of all) u.destroy();
    window.fathomCharts = window.fathomCharts.filter(u => !all.includes(u));
    this.charts = [];
    this.others = [];
  }
}

function bandsPlugin(cur) {
  return {
    hooks: {
      drawClear: u => {
        const model = cur.model;
        const ctx = u.ctx;
        const { top, height } = u.bbox;
        for (const b of model.bands || []) {
          const x0 = u.valToPos(b.x0, "x", true), x1 = u.valToPos(b.x1, "x", true);
          if (x1 < u.bbox.left || x0 > u.bbox.left + u.bbox.width) continue;
          const l = Math.max(x0, u.bbox.left), r = Math.min(x1, u.bbox.left + u.bbox.width);
          ctx.save();
          if (b.kind === "stall") {
            ctx.fillStyle = "rgba(213,94,0,0.13)";
            ctx.fillRect(l, top, r - l, height);
            ctx.strokeStyle = "rgba(213,94,0,0.45)";
            ctx.lineWidth = 1;
            ctx.beginPath();
            ctx.rect(l, top, r - l, height);
            ctx.clip();
            for (let x = l - height; x < r; x += 10) { ctx.moveTo(x, top + height); ctx.lineTo(x + height, top); }
            ctx.stroke();
          } else {
            ctx.fillStyle = "rgba(0,0,0,0.07)";
            ctx.fillRect(l, top, r - l, height);
          }
          ctx.restore();
        }
      },
      draw: u => {
        const ctx = u.ctx;
        for (const h of cur.model.hlines || []) {
          const y = u.valToPos(h.at, "y", true);
          ctx.save();
          ctx.strokeStyle = "#b00020";
          ctx.setLineDash([6, 4]);
          ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
          ctx.fillStyle = "#b00020";
          ctx.font = `${12 * devicePixelRatio}px system-ui`;
          ctx.fillText(h.label, u.bbox.left + 6, y - 4);
          ctx.restore();
        }
        for (const v of cur.model.vlines || []) {
          const x = u.valToPos(cur.model.xscale === "nines" ? ninesX(v.at) : v.at, "x", true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.save();
          ctx.strokeStyle = "#b00020";
          ctx.setLineDash([6, 4]);
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
          ctx.fillStyle = "#b00020";
          ctx.font = `${12 * devicePixelRatio}px system-ui`;
          const w = ctx.measureText(v.label).width;
          ctx.fillText(v.label, x + 4 + w > u.bbox.left + u.bbox.width ? x - 4 - w : x + 4, u.bbox.top + 24 * devicePixelRatio);
          ctx.restore();
        }
      },
    },
  };
}

// uplotData aligns the series (each has its own x values) on one x array. On a log
// y axis a value not above zero is a gap, as in the static report.
function uplotData(model, nines) {
  const tx = x => (nines ? ninesX(x) : x);
  const log = model.yscale === "log";
  const tables = model.series.map(s => [s.x.map(tx), s.y.map(v => (v === null || (log && !(v > 0)) ? null : v))]);
  if (tables.length === 0) return [[]];
  const same = tables.every(t => t[0].length === tables[0][0].length && t[0].every((v, i) => v === tables[0][0][i]));
  if (same) return [tables[0][0], ...tables.map(t => t[1])];
  return uPlot.join(tables, tables.map(() => [1]));
}

// logTicks are the powers of ten covering lo–hi, with 2 and 5 between them when the
// range spans fewer than three decades: the static report's log ticks.
function logTicks(lo, hi) {
  if (!(lo > 0) || !(hi >= lo)) return [1, 10];
  const e0 = Math.floor(Math.log10(lo) + 1e-9);
  let e1 = Math.ceil(Math.log10(hi) - 1e-9);
  if (e1 === e0) e1++;
  const ts = [];
  for (let e = e0; e <= e1; e++) {
    const p = Math.pow(10, e);
    ts.push(p);
    if (e1 - e0 < 3 && e < e1) ts.push(2 * p, 5 * p);
  }
  return ts;
}

// unitFormat shows a value in an axis's unit, as the static report does.
function unitFormat(unit) {
  const u = unit || { suffix: "", div: 1 };
  return v => (v === null || v === undefined ? "–" : num(v / (u.div || 1)) + (u.suffix ? (["ms", "µs", "s"].includes(u.suffix) ? " " : "") + u.suffix : ""));
}

// fitLabel makes an axis label fit the chart it is drawn on (uPlot centres it on the
// plot, and the canvas cuts what passes its edge): as written when it fits, else with
// "transactions per second" said "tps", else cut short with an ellipsis (the figure's
// title and legend still say it in full).
function fitLabel(text) {
  return (u, i) => {
    const a = u.axes[i], vertical = a.side % 2 === 1, b = u.bbox;
    const mid = vertical ? b.top + b.height / 2 : b.left + b.width / 2, lim = vertical ? u.ctx.canvas.height : u.ctx.canvas.width;
    const room = 2 * Math.min(mid, lim - mid) - 4 * devicePixelRatio;
    const ctx = u.ctx;
    ctx.save();
    ctx.font = a.labelFont[0];
    const fits = t => ctx.measureText(t).width <= room;
    let t = text;
    if (!fits(t)) t = t.replace(/transactions per second/g, "tps");
    while (!fits(t) && t.length > 2) t = t.slice(0, -2) + "…";
    ctx.restore();
    return t;
  };
}

function figureOf(parent, model, cls) {
  const box = el("figure", { class: "chart" + (cls ? " " + cls : ""), id: model.id || undefined, "data-title": model.title, "data-kind": model.kind || "line" });
  box.append(el("h3", {}, model.title));
  if (model.subtitle) box.append(el("p", { class: "sub" }, model.subtitle));
  parent.append(box);
  return box;
}

// drawChart draws one chart model of any kind into parent; group (optional) zooms
// with others. opts.small draws a small chart (a panel of small multiples).
function drawChart(parent, model, group, opts) {
  if (model.kind === "multiples") return drawMultiples(parent, model);
  if (model.kind === "box" || model.kind === "bars") return drawCategories(parent, model);
  return drawLines(parent, model, group, opts || {});
}

// drawMultiples draws small multiples: one small chart per panel, side by side, all
// on the same y range so that they compare at a glance.
function drawMultiples(parent, model) {
  const box = figureOf(parent, model, "wide multiples");
  const grid = el("div", { class: "panels" });
  box.append(grid);
  let hi = 0;
  for (const p of model.panels || []) for (const s of p.series) for (const v of s.y) if (v !== null && v > hi) hi = v;
  return (model.panels || []).map(p => drawLines(grid, p, null, { small: true, ymax: hi }));
}

// drawCategories draws a box plot or grouped bars: one slot per category on the x
// axis; hovering a slot shows its numbers in the legend.
function drawCategories(parent, model) {
  const boxes = model.kind === "box";
  const cats = boxes ? model.boxes.map(b => b.label) : model.categories || [];
  const yfmt = unitFormat(model.yunit);
  const yu = model.yunit || { suffix: "", div: 1 };
  const fig = figureOf(parent, model, cats.length > 8 ? "wide" : "");
  const plot = el("div", { role: "img", "aria-label": `${model.title}: ${cats.join(", ")}` });
  fig.append(plot);
  if (model.caption) fig.append(el("figcaption", { class: "note" }, model.caption));
  const xs = cats.map((_, i) => i);
  const hidden = () => null; // the plugin draws; the series carry the numbers for hover
  let data, series;
  if (boxes) {
    const col = k => model.boxes.map(b => (b[k] === null || Number.isNaN(b[k]) ? null : b[k]));
    series = ["median", "q1", "q3", "min", "max"].map((k, i) => ({ label: k, stroke: i === 0 ? "#000" : "#888", paths: hidden, points: { show: false }, value: (u, v) => yfmt(v) }));
    series.push({ label: "runs", paths: hidden, points: { show: false }, value: (u, v) => (v === null ? "–" : String(v)) });
    data = [xs, col("median"), col("q1"), col("q3"), col("min"), col("max"), model.boxes.map(b => (b.points || []).length)];
  } else {
    series = model.series.map(s => ({ label: s.name || model.ylabel, stroke: s.colour, fill: s.colour, paths: hidden, points: { show: false },
      value: (u, v) => yfmt(v) }));
    data = [xs, ...model.series.map(s => s.y)];
  }
  let top = 0;
  if (boxes) for (const b of model.boxes) for (const v of [b.max, ...(b.points || [])]) { if (v !== null && v > top) top = v; }
  else for (const s of model.series) for (const v of [...s.y, ...(s.hi || [])]) { if (v !== null && v > top) top = v; }
  const draw = u => {
    const ctx = u.ctx, dpr = devicePixelRatio;
    const slot = u.valToPos(1, "x", true) - u.valToPos(0, "x", true);
    ctx.save();
    if (boxes) {
      model.boxes.forEach((b, i) => {
        if (b.median === null || Number.isNaN(b.median)) return;
        const cx = u.valToPos(i, "x", true), bw = Math.min(slot * 0.5, 40 * dpr), y = v => u.valToPos(v, "y", true);
        ctx.strokeStyle = "#000"; ctx.lineWidth = dpr;
        ctx.beginPath();
        ctx.moveTo(cx, y(b.min)); ctx.lineTo(cx, y(b.q1)); ctx.moveTo(cx, y(b.q3)); ctx.lineTo(cx, y(b.max));
        ctx.moveTo(cx - bw / 4, y(b.min)); ctx.lineTo(cx + bw / 4, y(b.min)); ctx.moveTo(cx - bw / 4, y(b.max)); ctx.lineTo(cx + bw / 4, y(b.max));
        ctx.stroke();
        ctx.fillStyle = "#cfe3f1";
        ctx.fillRect(cx - bw / 2, y(b.q3), bw, Math.max(y(b.q1) - y(b.q3), 0.5));
        ctx.strokeRect(cx - bw / 2, y(b.q3), bw, Math.max(y(b.q1) - y(b.q3), 0.5));
        ctx.lineWidth = 2 * dpr;
        ctx.beginPath(); ctx.moveTo(cx - bw / 2, y(b.median)); ctx.lineTo(cx + bw / 2, y(b.median)); ctx.stroke();
        ctx.fillStyle = "#0072B2";
        (b.points || []).forEach((p, k) => {
          ctx.beginPath(); ctx.arc(cx + bw * 0.75 + ((k % 5) - 2) * bw / 10, y(p), 2 * dpr, 0, 2 * Math.PI); ctx.fill();
        });
      });
    } else {
      const n = Math.max(1, model.series.length), bw = slot * 0.8 / n;
      model.series.forEach((s, k) => {
        if (!u.series[k + 1].show) return;
        s.y.forEach((v, i) => {
          if (v === null) return;
          const x = u.valToPos(i, "x", true) - slot * 0.4 + k * bw, y0 = u.valToPos(0, "y", true), y = u.valToPos(v, "y", true);
          ctx.fillStyle = s.colour; ctx.globalAlpha = 0.45;
          ctx.fillRect(x + dpr, y, Math.max(bw - 2 * dpr, dpr), y0 - y);
          ctx.globalAlpha = 1;
          const lo = (s.lo || [])[i], hi = (s.hi || [])[i];
          if (lo !== null && lo !== undefined && hi !== null && hi !== undefined) {
            const cx = x + bw / 2;
            ctx.strokeStyle = "#000"; ctx.lineWidth = dpr;
            ctx.beginPath();
            ctx.moveTo(cx, u.valToPos(lo, "y", true)); ctx.lineTo(cx, u.valToPos(hi, "y", true));
            for (const w of [lo, hi]) { ctx.moveTo(cx - 3 * dpr, u.valToPos(w, "y", true)); ctx.lineTo(cx + 3 * dpr, u.valToPos(w, "y", true)); }
            ctx.stroke();
          }
        });
      });
    }
    ctx.restore();
  };
  const width = Math.max(320, plot.clientWidth || parent.clientWidth || 600);
  // Category names too long to stand side by side are slanted, and the axis is made
  // deep enough for the longest (the canvas would cut it), the plot keeping 120 px.
  const rotate = cats.some(c => c.length * 7 > width / Math.max(cats.length, 1)) ? -35 : 0;
  const slanted = (u, values) => {
    if (!values) return 60;
    const ctx = u.ctx, a = u.axes[0], dpr = devicePixelRatio;
    ctx.save(); ctx.font = a.font[0];
    const w = Math.max(0, ...values.map(v => ctx.measureText(String(v ?? "")).width)) / dpr;
    ctx.restore();
    const th = Math.abs(rotate) * Math.PI / 180, fs = a.font[1] / dpr;
    return Math.min(Math.ceil(w * Math.sin(th) + fs * Math.cos(th) + (a.ticks.size || 0) + a.gap + 4), height - 120 - 30);
  };
  // The chart grows by what the slanted names need beyond the usual 60 px (about 7 px
  // a character), so that the plot keeps its height.
  const height = 280 + (rotate ? Math.max(0, Math.ceil(Math.max(...cats.map(c => c.length)) * 7 * Math.sin(35 * Math.PI / 180)) + 30 - 60) : 0);
  const u = new uPlot({
    width, height,
    series: [{ label: model.xlabel || "cell", value: (u, v) => (v === null ? "–" : cats[v] ?? "") }, ...series],
    legend: { live: true },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    scales: { x: { time: false, range: () => [-0.5, cats.length - 0.5] }, y: { range: () => [0, top > 0 ? top * 1.08 : 1] } },
    axes: [
      { label: model.xlabel ? fitLabel(model.xlabel) : undefined, splits: () => xs, values: (u, splits) => splits.map(i => cats[i] ?? ""), rotate, size: rotate ? slanted : 60 },
      { label: fitLabel(model.ylabel + (yu.suffix ? ` (${yu.suffix})` : "")), values: (u, splits) => splits.map(v => num(v / (yu.div || 1))), size: 60 },
    ],
    hooks: { draw: [draw] },
  }, data, plot);
  u.__model = model;
  window.fathomCharts.push(u);
  return u;
}

function drawLines(parent, model, group, look) {
  const nines = model.xscale === "nines";
  const log = model.yscale === "log";
  const cur = { model }; // the model drawn now: a live run's charts get new ones
  const yu = model.yunit || { suffix: "", div: 1 }, xu = model.xunit || { suffix: "", div: 1 };
  const yfmt = unitFormat(yu);
  const xfmt = v => (v === null || v === undefined ? "–" : nines ? ninesLabel(v) : num(v / (xu.div || 1)));
  const box = figureOf(parent, model, nines ? "wide" : look.small ? "small" : "");
  let sub = box.querySelector("p.sub");
  const plot = el("div", { role: "img", "aria-label": `${model.title}: ${model.series.map(s => s.name).join(", ")}` });
  box.append(plot);
  if (model.caption) box.append(el("figcaption", { class: "note" }, model.caption));
  const width = look.small ? 300 : Math.max(320, plot.clientWidth || parent.clientWidth || 600);
  const series = [{ label: model.xlabel, value: (u, v) => xfmt(v) }];
  for (const s of model.series) {
    series.push({
      label: s.name || model.ylabel,
      stroke: s.colour || "#000",
      width: 1.5,
      dash: s.dash ? s.dash.split(/[ ,]+/).map(Number) : undefined,
      points: { show: !!s.points, size: 5 },
      value: (u, v) => yfmt(v),
      spanGaps: false,
    });
  }
  const opts = {
    width, height: look.small ? 190 : 240,
    series,
    legend: { live: true },
    cursor: { drag: { x: !nines, y: false }, sync: group ? { key: group.key } : undefined },
    scales: {
      x: { time: false, range: (u, lo, hi) => (u.__zoomed ? [lo, hi] : nines ? [0, Math.max(hi, 2) + 0.35] : [cur.model.xrange ? cur.model.xrange.min : lo, cur.model.xrange ? cur.model.xrange.max : hi]) },
      y: log ? { distr: 3, log: 10 } : { range: (u, lo, hi) => { if (look.ymax !== undefined) hi = Math.max(hi, look.ymax); return [cur.model.yzero ? Math.min(0, lo) : lo, hi > (cur.model.yzero ? 0 : lo) ? hi * 1.05 : 1]; } },
    },
    axes: [
      // A tick the filter left out (null: a fractional run number) gets no label, not "–".
      { label: model.xlabel ? fitLabel(model.xlabel) : undefined, values: (u, splits) => splits.map(v => (v === null || v === undefined ? null : xfmt(v))), splits: nines ? (u, i, lo, hi) => { const s = []; for (let k = 0; k <= Math.floor(hi); k++) s.push(k); return s; } : undefined,
        filter: model.xwhole ? (u, splits) => splits.map(v => (Number.isInteger(v) ? v : null)) : undefined },
      { label: fitLabel(model.ylabel + (yu.suffix ? ` (${yu.suffix})` : "")), values: (u, splits) => splits.map(v => num(v / (yu.div || 1))), size: 60,
        splits: log ? (u, i, lo, hi) => logTicks(lo / (yu.div || 1), hi / (yu.div || 1)).map(v => v * (yu.div || 1)).filter(v => v >= lo * 0.999 && v <= hi * 1.001) : undefined },
    ],
    plugins: [bandsPlugin(cur)],
    hooks: {
      setSelect: [u => {
        if (u.select.width < 2) return;
        const min = u.posToVal(u.select.left, "x"), max = u.posToVal(u.select.left + u.select.width, "x");
        u.__zoomed = true;
        u.setScale("x", { min, max });
        u.setSelect({ left: 0, width: 0 }, false);
        if (group) { for (const o of group.charts) o.__zoomed = true; group.set(min, max, u); if (group.onzoom) group.onzoom(min, max); }
      }],
    },
  };
  opts.cursor.drag.setScale = false;
  const u = new uPlot(opts, uplotData(model, nines), plot);
  u.__model = model;
  u.__update = m => {
    cur.model = m; u.__model = m;
    if ((m.subtitle || "") !== (sub ? sub.textContent : "")) { // (a zoomed window's points may merge fewer intervals)
      if (!sub) { sub = el("p", { class: "sub" }); box.querySelector("h3").after(sub); }
      sub.textContent = m.subtitle || "";
    }
    u.setData(uplotData(m, nines), !u.__zoomed);
  };
  window.fathomCharts.push(u); // for the browser tests and the console
  u.__reset = () => {
    u.__zoomed = false;
    const xs = u.data[0];
    if (xs.length) u.setScale("x", { min: cur.model.xrange ? cur.model.xrange.min : xs[0], max: cur.model.xrange ? cur.model.xrange.max : xs[xs.length - 1] });
  };
  if (group) group.add(u);
  return u;
}

function chartGrid(parent, models, group) {
  const grid = el("div", { class: "charts" });
  parent.append(grid);
  return models.map(m => drawChart(grid, m, group));
}

// ---------- runs ----------

async function runsPage(q, watch) {
  if (watch) q.set("workload", "watch");
  const page = await api("/api/runs?" + q.toString());
  const f = page.facets;
  const sel = (name, values, label) => el("label", {}, label,
    el("select", { name, onchange: apply }, el("option", { value: "" }, "any"),
      values.map(v => el("option", { value: v, selected: q.get(name) === v }, v))));
  const form = el("form", { class: "filters", onsubmit: e => { e.preventDefault(); apply(); } },
    watch ? null : sel("workload", f.workloads, "workload"),
    sel("kind", f.kinds, "target kind"),
    sel("status", f.statuses, "status"),
    el("label", {}, "label (key=value, key=*)", el("input", { name: "label", value: q.get("label") || "", list: "labelkeys", size: 18 })),
    el("datalist", { id: "labelkeys" }, f.labels.map(k => el("option", { value: k + "=" }))),
    el("label", {}, "from", el("input", { type: "date", name: "since", value: q.get("since") || "", onchange: apply })),
    el("label", {}, "to", el("input", { type: "date", name: "until", value: q.get("until") || "", onchange: apply })),
    el("button", { type: "submit" }, "Filter"),
    el("button", { type: "button", onclick: () => go(watch ? "watch" : "runs") }, "Clear"));
  function apply() {
    const n = new URLSearchParams();
    for (const x of form.elements) if (x.name && x.value) n.set(x.name, x.value);
    if (q.get("sort")) n.set("sort", q.get("sort"));
    if (q.get("order")) n.set("order", q.get("order"));
    if (watch) n.delete("workload");
    go(watch ? "watch" : "runs", n);
  }
  const sortBy = key => {
    const n = new URLSearchParams(q);
    if (watch) n.delete("workload");
    const cur = q.get("sort") || "id", desc = q.get("order") !== "asc";
    n.set("sort", key);
    n.set("order", cur === key && desc ? "asc" : "desc");
    n.delete("offset");
    go(watch ? "watch" : "runs", n);
  };
  const cur = q.get("sort") || "id", desc = q.get("order") !== "asc";
  const th = (key, text, numeric) => el("th", { class: "sortable" + (numeric ? " num" : ""), "data-sort": key, onclick: () => sortBy(key),
    "aria-sort": cur === key ? (desc ? "descending" : "ascending") : undefined, scope: "col" }, text);
  const picked = new Set();
  const cmpBtn = el("button", { type: "button", disabled: true, onclick: () => { const [a, b] = [...picked].sort((x, y) => x - y); go("compare", new URLSearchParams({ a, b })); } }, "Compare the two picked runs");
  const rows = page.rows.map(r => el("tr", { class: "run", "data-id": r.id },
    el("td", {}, el("input", { type: "checkbox", "aria-label": `pick run ${r.id} to compare`, onchange: e => {
      if (e.target.checked) picked.add(r.id); else picked.delete(r.id);
      cmpBtn.disabled = picked.size !== 2;
    } })),
    el("td", { class: "num" }, el("a", { href: `#/run/${r.id}` }, r.id)),
    el("td", {}, when(r.started_at)),
    el("td", {}, r.workload), el("td", {}, r.target_kind), statusCell(r.status, r.reason),
    el("td", { class: "num" }, r.clients), el("td", { class: "num" }, secs(r.seconds)),
    el("td", { class: "num" }, rate(r.tps)), el("td", { class: "num" }, ms(r.p99_ms)),
    el("td", { class: "num" }, r.errors),
    el("td", {}, labelsOf(r.labels))));
  const offset = page.offset, limit = Number(q.get("limit") || 100);
  const pageTo = o => { const n = new URLSearchParams(q); if (watch) n.delete("workload"); n.set("offset", o); go(watch ? "watch" : "runs", n); };
  const pager = el("div", { class: "pager" },
    el("button", { type: "button", disabled: offset === 0, onclick: () => pageTo(Math.max(0, offset - limit)) }, "← newer"),
    el("span", { id: "count" }, page.total === 0 ? "no runs match" : `runs ${offset + 1}–${offset + page.rows.length} of ${page.total}` + (page.total !== page.all ? ` (${page.all} in the store)` : "")),
    el("button", { type: "button", disabled: offset + page.rows.length >= page.total, onclick: () => pageTo(offset + limit) }, "older →"),
    el("span", { class: "muted", title: "the list is read from the store at most every few seconds" },
      `store read ${new Date(page.as_of).toLocaleTimeString()}, answered in ${num(page.elapsed_ms)} ms`), cmpBtn);
  show(
    el("h1", {}, watch ? "Watch sessions" : "Runs"),
    watch ? el("p", { class: "note" }, "Sessions of `fathom watch`: server and OS metrics over time, no workload.") : null,
    form, pager,
    el("table", { class: "runs-table", id: "runs" },
      el("thead", {}, el("tr", {}, el("th", {}, ""), th("id", "run", true), th("started", "started (UTC)"), th("workload", "workload"), th("kind", "target"),
        th("status", "status"), th("clients", "clients", true), th("seconds", "measured", true), th("tps", "tx/s", true), th("p99", "p99", true),
        el("th", { class: "num" }, "errors"), el("th", {}, "labels"))),
      el("tbody", {}, rows)));
}

// ---------- one run ----------

function factsOf(p) {
  const r = p.run, s = JSON.parse(JSON.stringify(r.summary || {}));
  const lat = s.latency_ms || {};
  const facts = [
    ["status", r.status + (r.reason ? ` (${r.reason})` : "")],
    ["workload", p.figures.watch ? "none: a watch session of server and OS metrics" : `${r.workload}, ${r.clients} clients` + (r.rate ? `, rate ${num(r.rate)}/s (open loop)` : ", closed loop")],
    ["target", `${r.target_kind} ${r.server_version || ""}`],
    ["started", when(r.started_at) + (r.ended_at && !r.ended_at.startsWith("0001-") ? `, ended ${when(r.ended_at)}` : "")],
  ];
  if (!p.figures.watch) {
    facts.push(["measured", `${num(s.seconds || 0)} s in ${s.intervals || 0} intervals` + (p.live ? " so far" : "")]);
    facts.push(["throughput", `${rate(s.tps)} tx/s, ${rate(s.qps)} statements/s`]);
    // TPC-C's units (tpcc): committed New-Orders and every transaction per minute as the
    // clients counted them, and the server's count of commits and rollbacks (HammerDB's TPM).
    if (s.tpm) facts.push(["NOPM / TPM", `NOPM ${num(s.nopm || 0)}, TPM ${num(s.tpm)} (clients' count)` +
      (s.server_tpm ? `; server TPM ${num(s.server_tpm)} (${s.server_tpm_source}, every session's)` : "")]);
    // No successful transaction: no latency to give (a 0 ms would be a number that is not true).
    facts.push(["latency", (s.transactions || 0) > 0 ? `p50 ${ms(lat.p50)}, p95 ${ms(lat.p95)}, p99 ${ms(lat.p99)}, max ${ms(lat.max)}` : "none: no transaction succeeded"]);
    facts.push(["errors", `${s.errors || 0}; failed ${s.failed || 0}, retries ${s.retries || 0}, reconnects ${s.reconnects || 0}`]);
    if (r.rate) facts.push(["open loop", `late ${s.late || 0}, dropped ${s.dropped || 0}; latency counts from the intended start`]);
    if (s.clients_aborted) facts.push(["clients aborted", `${s.clients_aborted} of ${r.clients}` + (s.clients_aborted < r.clients ? " (the others went on)" : " (every client)")]);
    if (s.max_error_rate_pct !== undefined) facts.push(["error rate", `${num(s.error_rate_pct || 0)}% of transactions failed (maximum ${num(s.max_error_rate_pct)}%)`]);
  }
  return el("dl", { class: "facts", id: "facts" }, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

// errorsOf lists the run's first distinct errors, as `fathom show` does.
function errorsOf(p) {
  if (!p.errors || !p.errors.length) return null;
  const at = e => `client ${e.client} at ${num(Math.round(e.at_ns / 1e6) / 1e3)} s` + (e.where ? ` in ${e.where}` : e.transaction ? ` in ${e.transaction}` : "") +
    (e.aborted ? "; it aborted its client" : "");
  const rows = p.errors.map((e, i) => el("tr", {}, el("td", { class: "num" }, i + 1), el("td", {}, e.class), el("td", {}, e.code || "–"),
    el("td", {}, e.message), el("td", { class: "num" }, String(e.count) + (e.warmup_count ? ` (+${e.warmup_count} in warm-up)` : "")), el("td", {}, at(e))));
  if (p.errors_unlisted) rows.push(el("tr", {}, el("td", {}), el("td", {}), el("td", {}), el("td", {}, "other errors, none of these"),
    el("td", { class: "num" }, p.errors_unlisted), el("td", {})));
  return el("section", { id: "errors" }, el("h2", {}, "First errors"),
    el("p", { class: "note" }, "Distinct by class, code and message, in the order the run first met them; times are counted in the measured intervals."),
    el("table", { class: "errors" }, el("thead", {}, el("tr", {}, ["#", "class", "code", "message", "times", "first met"].map(h => el("th", {}, h)))),
      el("tbody", {}, rows)));
}

function stallsOf(p) {
  if (!p.sampled) return null;
  const wrap = el("section", { id: "stalls" }, el("h2", {}, "Stalls"));
  if (!p.stalls_analyzed) wrap.append(el("p", { class: "note" }, "Not analysed (the run may still be going)."));
  else if (p.stalls.length === 0) wrap.append(el("p", { class: "note" }, "None: throughput never fell below the threshold of its rolling median."));
  else {
    wrap.append(el("p", { class: "note" }, `${p.stalls.length} stall(s), shaded with hatching on every time chart (warm-up is plain grey).`));
    wrap.append(el("table", { class: "stalls" },
      el("thead", {}, el("tr", {}, ["#", "from", "to", "throughput", "baseline", "mean", "depth", "lost", "cause"].map(h => el("th", {}, h)))),
      el("tbody", {}, p.stalls.map(s => el("tr", {},
        el("td", {}, s.number), el("td", { class: "num" }, num(s.start_ns / 1e9) + " s"), el("td", { class: "num" }, num(s.end_ns / 1e9) + " s"),
        el("td", {}, s.throughput), el("td", { class: "num" }, rate(s.baseline)), el("td", { class: "num" }, rate(s.mean)),
        el("td", { class: "num" }, num(100 * s.depth) + "%"), el("td", { class: "num" }, rate(s.lost)),
        el("td", { title: s.explanation || "" }, s.title || s.cause || "no known pattern"))))));
  }
  return wrap;
}

function provenanceOf(r) {
  const rows = [["uuid", r.uuid], ["command", r.command], ["tool", r.tool_version], ["host", `${r.host.hostname} (${r.host.os}, ${r.host.cpus} CPUs)`],
    ["seed", r.seed], ["interval", num(r.interval_ns / 1e9) + " s"], ["warm-up", num(r.warmup_ns / 1e9) + " s"]];
  for (const [k, v] of Object.entries(r.options || {})) rows.push(["option " + k, v]);
  const settings = Object.entries(r.settings || {});
  return el("details", {}, el("summary", {}, `Provenance (${rows.length} facts, ${settings.length} server settings)`),
    el("table", { class: "kv" }, el("tbody", {}, rows.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, String(v)))))),
    settings.length ? el("table", { class: "kv" }, el("tbody", {}, settings.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, v))))) : null);
}

function labelEditor(p, redraw) {
  if (!info.writable) return el("p", { class: "note" }, "Read-only server: labels, notes and deleting need `fathom serve --token`.");
  const key = el("input", { placeholder: "key (note for a note)", size: 16 }), val = el("input", { placeholder: "value", size: 30 });
  const msg = el("span", { class: "muted", role: "status" });
  const token = () => sessionStorage.getItem("fathom-token") || (() => { const t = prompt("The server's token:"); if (t) sessionStorage.setItem("fathom-token", t); return t; })();
  const send = async (method, path, body) => {
    try {
      // Logged in with the write role (the browser's basic-auth prompt): the browser
      // sends those credentials; X-Fathom-Request says the page, not another site, asks.
      const auth = info.role === "write" ? {} : { Authorization: "Bearer " + token() };
      await api(path, { method, headers: { "Content-Type": "application/json", "X-Fathom-Request": "1", ...auth }, body: body && JSON.stringify(body) });
      return true;
    } catch (e) { msg.textContent = e.message; if (/token/.test(e.message)) sessionStorage.removeItem("fathom-token"); return false; }
  };
  return el("div", { class: "edit" },
    key, val,
    el("button", { type: "button", onclick: async () => { if (key.value && await send("POST", `/api/runs/${p.run.id}/labels`, { set: { [key.value]: val.value } })) redraw(); } }, "Set label"),
    el("button", { type: "button", onclick: async () => { if (key.value && await send("POST", `/api/runs/${p.run.id}/labels`, { remove: [key.value] })) redraw(); } }, "Remove label"),
    el("button", { type: "button", onclick: async () => { if (confirm(`Delete run ${p.run.id} with everything it carries?`) && await send("DELETE", `/api/runs/${p.run.id}`)) go("runs"); } }, "Delete run"),
    msg);
}

async function runPage(id) {
  const p = await api(`/api/runs/${id}`);
  const group = new ZoomGroup();
  group.key = "run-" + id;
  cleanup.push(() => group.destroy());
  const status = el("span", { id: "livestatus" });
  const body = el("div", {});
  // A chart layout's signature: the same one on a live update lets the charts take
  // the new data in place (keeping zoom, hidden series and hover).
  const models = p => [...(p.figures.time || []), ...(p.figures.metrics || []).flatMap(g => g.charts)];
  const sig = p => models(p).map(c => `${c.id}:${(c.yunit || {}).suffix}:${c.series.map(s => s.name).join("|")}`).join(",") +
    (p.figures.distribution ? `;d:${(p.figures.distribution.yunit || {}).suffix}` : "") + `;g${p.group}`;
  const top = el("div", {}), charts = el("div", {}), bottom = el("div", {});
  body.append(top, charts, bottom);
  // Zooming fetches the window's intervals at the resolution its width needs (every
  // stored interval once few enough are in view); Reset zoom goes back to the whole
  // run. The charts keep their ids, so each takes its own window model.
  let full = p, asked = 0;
  const zoomNote = el("span", { class: "note", id: "zoomnote", role: "status" });
  const fetchWindow = async (min, max) => {
    const n = ++asked;
    const width = Math.round(Math.max(...group.charts.map(u => u.bbox.width / devicePixelRatio), 100));
    let win;
    try { win = await api(`/api/runs/${id}/window?` + new URLSearchParams({ from: Math.max(0, min), to: max, points: Math.min(width, 5000) })); }
    catch (e) { zoomNote.textContent = "finer data not available: " + e.message; return; }
    if (n !== asked || !group.range) return; // a newer zoom, or the zoom was reset
    const byId = new Map([...win.time, ...(win.metrics || []).flatMap(g => g.charts)].map(m => [m.id, m]));
    for (const u of group.charts) {
      const m = byId.get(u.__model.id);
      if (!m) continue;
      u.__update(m);
      u.setScale("x", { min: group.range[0], max: group.range[1] });
    }
    zoomNote.textContent = `zoomed: ${win.intervals} intervals in view, ` + (win.group > 1 ? `each point merges ${win.group}` : "every interval as stored");
    const gn = document.getElementById("groupnote");
    if (gn) gn.hidden = true;
    document.body.dataset.window = String(n);
  };
  group.onzoom = (min, max) => { fetchWindow(min, max); };
  group.onreset = () => { asked++; zoomNote.textContent = ""; const gn = document.getElementById("groupnote"); if (gn) gn.hidden = false; models(full).forEach((m, i) => group.charts[i] && group.charts[i].__update(m)); };
  const render = p => {
    full = p;
    top.replaceChildren(factsOf(p));
    if (p.types && p.types.length) {
      top.append(el("table", {}, el("thead", {}, el("tr", {}, ["type", "tx/s", "p50", "p95", "p99", "max", "errors"].map(h => el("th", {}, h)))),
        el("tbody", {}, p.types.map(t => el("tr", {}, el("td", {}, t.name), el("td", { class: "num" }, rate(t.tps)), el("td", { class: "num" }, ms(t.p50_ms)),
          el("td", { class: "num" }, ms(t.p95_ms)), el("td", { class: "num" }, ms(t.p99_ms)), el("td", { class: "num" }, ms(t.max_ms)), el("td", { class: "num" }, t.errors))))));
    }
    const errs = errorsOf(p);
    if (errs) top.append(errs);
    bottom.replaceChildren();
    if (p.figures.flat && p.figures.flat.length) bottom.append(el("p", { class: "note" }, "Zero throughout, not drawn: " + p.figures.flat.join(", ") + "."));
    const st = stallsOf(p);
    if (st) bottom.append(st);
    bottom.append(el("h2", {}, "Labels"), el("p", {}, labelsOf(p.run.labels).length ? labelsOf(p.run.labels) : el("span", { class: "muted" }, "none")),
      labelEditor(p, () => route()), provenanceOf(p.run),
      el("p", {}, el("a", { href: `/history/run/${id}`, id: "series-history" }, "This run's series over time (history, changes)")),
      downloadsOf("run", f => `/api/runs/${id}/export?` + new URLSearchParams({ format: f })));
    if (group.sig === sig(p) && group.charts.length) {
      models(p).forEach((m, i) => group.charts[i].__update(m));
      if (p.figures.distribution && group.others[0]) group.others[0].__update(p.figures.distribution);
      if (group.range) fetchWindow(group.range[0], group.range[1]); // keep the zoomed window fine
      return;
    }
    group.destroy();
    group.sig = sig(p);
    charts.replaceChildren(el("div", { class: "toolbar" },
      el("button", { type: "button", id: "resetzoom", onclick: () => group.reset() }, "Reset zoom"),
      el("span", { class: "note" }, "Drag across a time chart to zoom (all time charts follow, at the resolution the window needs); click a legend entry to hide or show its series; hover for values."),
      zoomNote,
      p.group > 1 ? el("span", { class: "note", id: "groupnote" }, `Each point of the whole run merges ${p.group} intervals.`) : null));
    const time = p.figures.time || [];
    if (time.length) { charts.append(el("h2", {}, "Over time")); chartGrid(charts, time, group); }
    const metricsBox = el("div", {});
    if (p.figures.distribution) { charts.append(el("h2", {}, "Latency distribution")); group.others.push(...chartGrid(charts, [p.figures.distribution], null)); }
    charts.append(metricsBox);
    for (const g of p.figures.metrics || []) {
      metricsBox.append(el("h2", {}, "Metrics: " + g.title));
      chartGrid(metricsBox, g.charts, group);
    }
  };
  show(el("h1", { id: "title" }, p.title, " ", status), body);
  render(p);
  if (p.live) {
    status.replaceChildren(el("span", { class: "live" }, "live"), ` ${p.intervals} intervals`);
    const es = new EventSource(`/api/runs/${id}/live`);
    cleanup.push(() => es.close());
    es.addEventListener("run", ev => {
      const np = JSON.parse(ev.data);
      document.getElementById("title").firstChild.textContent = np.title;
      status.replaceChildren(np.live ? el("span", { class: "live" }, "live") : "", ` ${np.intervals} intervals, updated ${new Date().toLocaleTimeString()}`);
      render(np);
    });
    es.addEventListener("end", () => { es.close(); status.append(" — the run has ended"); });
    es.addEventListener("fail", ev => { es.close(); status.append(" — " + JSON.parse(ev.data).error); });
  }
}

// ---------- experiments ----------

async function experimentsPage() {
  const exps = await api("/api/experiments");
  show(el("h1", {}, "Experiments"),
    exps.length === 0 ? el("p", { class: "muted" }, "No experiments in this store yet: `fathom experiment run PLAN` makes one.") :
      el("table", { id: "experiments" }, el("thead", {}, el("tr", {}, ["id", "name", "status", "slots done", "axes", "target", "created (UTC)"].map(h => el("th", {}, h)))),
        el("tbody", {}, exps.map(e => el("tr", {}, el("td", { class: "num" }, el("a", { href: `#/experiment/${e.id}` }, e.id)),
          el("td", {}, el("a", { href: `#/experiment/${e.id}` }, e.name)), statusCell(e.status, e.reason),
          el("td", { class: "num" }, `${e.complete}/${e.slots}`), el("td", {}, (e.axes || []).map(a => a.name).join(" × ")),
          el("td", {}, e.target), el("td", {}, when(e.created_at)))))));
}

// baselineFirst orders an axis's values as the report's charts do: the baseline
// (the plan's, else the first listed) first, the others as listed.
function baselineFirst(a) {
  const vs = a.values || [], b = a.baseline || vs[0];
  return vs.includes(b) ? [b, ...vs.filter(v => v !== b)] : vs;
}

async function experimentPage(id) {
  const x = await api(`/api/experiments/${id}`);
  const e = x.experiment;
  // The cells in the charts' order: each axis's baseline first.
  const order = new Map((e.axes || []).map(a => [a.name, baselineFirst(a)]));
  const rank = c => (c.coords || []).map(co => { const vs = order.get(co.axis) || []; return vs.indexOf(co.value); });
  x.cells = [...(x.cells || [])].sort((p, q) => { const a = rank(p), b = rank(q); for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i]; return p.cell - q.cell; });
  const cells = el("table", { id: "cells" }, el("thead", {}, el("tr", {}, ["cell", "runs", "tx/s median", "min–max", "p95 median", "p99 median", "errors (all runs)", "compare"].map(h => el("th", {}, h)))),
    el("tbody", {}, (x.cells || []).map((c, i) => el("tr", {},
      el("td", {}, c.key), el("td", { class: "num" }, `${c.runs}/${c.planned}` + (c.failed ? ` (${c.failed} failed)` : "")),
      el("td", { class: "num" }, rate(c.tps_median)), el("td", { class: "num" }, `${rate(c.tps_min)}–${rate(c.tps_max)}`),
      el("td", { class: "num" }, ms(c.p95_ms_median)), el("td", { class: "num" }, ms(c.p99_ms_median)), el("td", { class: "num" }, c.errors),
      el("td", {}, i > 0 && c.run_ids && c.run_ids.length && x.cells[0].run_ids && x.cells[0].run_ids.length ?
        el("a", { href: "#/compare?" + new URLSearchParams({ a: x.cells[0].run_ids.join(","), b: c.run_ids.join(",") }), title: `compare with ${x.cells[0].key}, the baselines' cell` }, "vs baseline") : "")))));
  const figs = el("div", { id: "exp-charts" });
  show(el("h1", {}, `Experiment ${e.name}`),
    el("dl", { class: "facts" }, el("dt", {}, "status"), el("dd", {}, `${e.status}${e.reason ? " (" + e.reason + ")" : ""}: ${e.complete} of ${e.slots} slots done`),
      el("dt", {}, "target"), el("dd", {}, e.target), el("dt", {}, "axes"), el("dd", {}, (e.axes || []).map(a => `${a.name} (${baselineFirst(a).join(", ")}; baseline ${baselineFirst(a)[0]})`).join(" × ") || "none"),
      el("dt", {}, "repetitions"), el("dd", {}, `${e.repetitions}, ${e.order} order`)),
    el("h2", {}, "Cells"), cells,
    el("h2", {}, "Charts"), figs,
    el("details", { id: "static-report" }, el("summary", {}, "The static report: the same charts as `fathom report exp:" + e.name + "` draws them, with the comparisons"),
      el("iframe", { class: "report", src: `/experiments/${id}/report/index.html`, title: `report of experiment ${e.name}` })));
  // The charts, drawn from the models the static report draws as SVG.
  let f;
  try { f = await api(`/api/experiments/${id}/figures`); } catch (err) { figs.append(el("p", { class: "note" }, "No charts: " + err.message)); return; }
  if ((f.cautions || []).length) figs.before(el("ul", { class: "warnings cautions" }, f.cautions.map(c => el("li", {}, c))));
  const group = new ZoomGroup();
  group.key = "exp-" + id;
  cleanup.push(() => group.destroy());
  group.others.push(...chartGrid(figs, f.summary || [], null).flat());
  if ((f.time || []).length) {
    figs.append(el("h3", {}, f.time_title), el("div", { class: "toolbar" }, el("button", { type: "button", onclick: () => group.reset() }, "Reset zoom"),
      el("span", { class: "note" }, "Drag across a chart to zoom; both follow.")));
    chartGrid(figs, f.time, group);
  }
  if (f.small && (f.small.panels || []).length) group.others.push(...drawChart(figs, f.small, null));
}

// ---------- compare ----------

async function comparePage(q) {
  const a = el("input", { name: "a", value: q.get("a") || "", size: 28, placeholder: "12, 3-7, label:k=v, exp:NAME:k=v" });
  const b = el("input", { name: "b", value: q.get("b") || "", size: 28, placeholder: "13, 8-12, label:k=v2" });
  const form = el("form", { class: "filters", onsubmit: ev => { ev.preventDefault(); go("compare", new URLSearchParams({ a: a.value, b: b.value })); } },
    el("label", {}, "A", a), el("label", {}, "B", b), el("button", { type: "submit" }, "Compare"));
  show(el("h1", {}, "Compare"), form);
  if (!q.get("a") || !q.get("b")) {
    main.append(el("p", { class: "note" }, "Pick two runs on the Runs page, or give two selections: runs (12, 3-7, 3,5,9), label:k=v or experiment cells exp:NAME:k=v."));
    return;
  }
  const c = await api("/api/compare?" + new URLSearchParams({ a: q.get("a"), b: q.get("b") }));
  for (const n of c.notes || []) main.append(el("p", { class: "note" }, "Note: " + n));
  main.append(el("pre", { class: "compare", id: "comparison" }, c.text));
  const dl = downloadsOf("comparison", f => "/api/compare?" + new URLSearchParams({ a: q.get("a"), b: q.get("b"), format: f }));
  if (dl) main.append(dl);
  const group = new ZoomGroup();
  group.key = "compare";
  cleanup.push(() => group.destroy());
  main.append(el("div", { class: "toolbar" }, el("button", { type: "button", onclick: () => group.reset() }, "Reset zoom"),
    el("span", { class: "note" }, "Side A solid, side B dashed; time since each run's start.")));
  chartGrid(main, c.charts, group);
}

// downloadsOf links the formats the server offers for a kind of model (from
// /api/info, which reads report's format registry), each a file to download.
function downloadsOf(kind, href) {
  const names = (info.downloads || {})[kind] || [];
  if (!names.length) return null;
  return el("p", { class: "note downloads" }, "Download: ", names.map((n, i) => [i ? " · " : "", el("a", { href: href(n), download: "" }, n)]));
}

// ---------- routing ----------

async function route() {
  for (const f of cleanup.splice(0)) f();
  window.fathomCharts = [];
  const { parts, q } = parseHash();
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("on", a.dataset.nav === parts[0] || (parts[0] === "run" && a.dataset.nav === "runs") || (parts[0] === "experiment" && a.dataset.nav === "experiments"));
  show(el("p", { class: "muted" }, "Loading…"));
  try {
    switch (parts[0]) {
      case "run": await runPage(Number(parts[1])); break;
      case "watch": await runsPage(q, true); break;
      case "experiments": await experimentsPage(); break;
      case "experiment": await experimentPage(Number(parts[1])); break;
      case "compare": await comparePage(q); break;
      default: await runsPage(q, false);
    }
    document.body.dataset.ready = location.hash;
  } catch (e) { showError(e); document.body.dataset.ready = "error"; }
}

window.addEventListener("hashchange", route);
api("/api/info").then(i => { info = i; document.getElementById("store").textContent = `${i.store}${i.writable ? "" : " · read-only"}`; }).catch(() => {}).finally(route);
