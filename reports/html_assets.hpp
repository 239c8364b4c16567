#pragma once
// The HTML report's own style sheet and scripts (the plots' drawing with
// Chart.js, the cell table's sorting and filtering), inlined into every page.
namespace ulpscope::html {

inline constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 110em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; }
th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv td { max-width: 80em; overflow-wrap: anywhere; }
.kv-tables { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }
tr.failed { background: #fdd; } tr.nondet { background: #ffd; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(24em, 1fr)); gap: 1em; }
.plot-box { position: relative; height: 19em; }
.plot-title { font-weight: 600; margin: 0.3em 0; }
.note, .legend { color: #555; font-size: 0.85em; }
.empty-view { padding: 1em; background: #f6f6f6; border: 1px dashed #bbb; }
.scroll { overflow-x: auto; margin-bottom: 1em; }
table.heat td, table.determinism td { text-align: center; white-space: nowrap; }
table.heat td { font-size: 0.8em; min-width: 2.5em; padding: 0.15em 0.3em; }
table.heat th { padding: 0.15em 0.3em; }
th.dist { vertical-align: bottom; height: 9em; }
th.dist span { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; }
tr.op-start > * { border-top: 2px solid #888; }
.swatch { display: inline-block; padding: 0 0.4em; border: 1px solid #ccc; }
.h0 { background: #c6e8bf; } .h1 { background: #e6f5a8; } .h2 { background: #fee08b; }
.h3 { background: #fdae61; } .h4 { background: #f46d43; } .h5 { background: #a50026; color: #fff; }
.hna { background: #ddd; color: #555; } .hfail { background: #555; color: #fff; } .hnone { background: #fff; }
.mark { display: inline-block; width: 1.3em; margin: 0 1px; font-size: 0.8em; font-weight: 600; }
.msame { background: #c6e8bf; } .mdiff { background: #d73027; color: #fff; } .mvary { background: #fdae61; } .mna { background: #e4e4e4; color: #888; }
table.cells th { cursor: pointer; white-space: nowrap; }
table.cells td { white-space: nowrap; } table.cells td.wrap { white-space: normal; min-width: 16em; }
table.cells th.sorted-asc::after { content: " ▲"; } table.cells th.sorted-desc::after { content: " ▼"; }
table.cells tr.filters th { cursor: default; background: #fafafa; }
table.cells input { width: 100%; min-width: 3em; box-sizing: border-box; font-size: 0.9em; }
select { font-size: 1em; }
nav a { margin-right: 1em; }
)";

// Draws every plot; a plugin records on each canvas that it drew, how many
// points Chart.js laid out and how many pixels carry a series colour.
inline constexpr const char* kPlotScript = R"(
(function () {
  const data = JSON.parse(document.getElementById('ulpscope-data').textContent);
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                   '#17becf', '#bcbd22', '#7f7f7f'];
  // Distinct marker shapes as well as colours, drawn hollow: equal values
  // stay visible through each other.
  const styles = ['circle', 'triangle', 'rect', 'rectRot', 'star', 'crossRot', 'cross', 'rectRounded', 'line', 'dash'];
  const rgb = palette.map(h => [1, 3, 5].map(i => parseInt(h.slice(i, i + 2), 16)));
  const drawn = {
    id: 'ulpscope-drawn',
    afterRender(chart) {
      const canvas = chart.canvas;
      let points = 0, front = 0;
      chart.data.datasets.forEach((d, i) => {
        if (!chart.isDatasetVisible(i)) return;
        if (d.front) front += chart.getDatasetMeta(i).data.length;
        else points += chart.getDatasetMeta(i).data.length;
      });
      // A hidden chart (nothing to show for the chosen distribution) has no pixels to read.
      const px = canvas.width && canvas.height ? chart.ctx.getImageData(0, 0, canvas.width, canvas.height).data : [];
      let ink = 0;
      for (let k = 0; k < px.length; k += 4)
        if (px[k + 3] === 255 && rgb.some(c => c[0] === px[k] && c[1] === px[k + 1] && c[2] === px[k + 2])) ink++;
      canvas.dataset.points = points;
      canvas.dataset.front = front;
      canvas.dataset.ink = ink;
      canvas.dataset.rendered = '1';
    }
  };
  const floor = data.ulp_floor;
  const number = (v) => (v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5))
      ? v.toExponential(0) : String(parseFloat(v.toPrecision(3)));
  const shown = (v) => Math.max(v, floor);
  // A log axis over the data only, whole decades.
  const decades = (values) => {
    const lo = Math.min(...values), hi = Math.max(...values);
    let min = Math.pow(10, Math.floor(Math.log10(lo) + 1e-9)), max = Math.pow(10, Math.ceil(Math.log10(hi) - 1e-9));
    if (max <= min) max = min * 10;
    return { min, max };
  };
  const logTicks = (v) => {
    if (Math.abs(v - floor) < floor * 1e-9) return '≤' + number(floor);
    const e = Math.log10(v);
    return Math.abs(e - Math.round(e)) < 1e-9 ? number(v) : '';
  };
  const ulpAxis = (values) => Object.assign({
    type: 'logarithmic', title: { display: true, text: 'worst max ulp error' },
    ticks: { autoSkip: false, callback: logTicks }
  }, decades(values.map(shown)));
  const tooltip = { callbacks: { label: (ctx) => ctx.raw.label } };
  const legend = { labels: { usePointStyle: true, boxWidth: 8 } };
  const common = { animation: false, responsive: true, maintainAspectRatio: false,
                   parsing: { xAxisKey: 'x', yAxisKey: 'y' } };

  // Error against n: points of series k are moved by a small fraction of a
  // decade in n (the tooltip gives the true n), so that ties do not hide.
  const evn = [];
  function errorVsN(dist) {
    for (const chart of data.error_vs_n) {
      const canvas = document.getElementById(chart.id);
      const empty = document.getElementById(chart.id + '-empty');
      const K = chart.series.length;
      const all = [];
      const datasets = chart.series.map((s, k) => {
        const pts = (s.points[dist] || []).map(p => ({ n: p[0], v: p[1], label: `${s.name}: ${p[2]}, max ulp ${number(p[1])}` }));
        pts.forEach(p => all.push(p));
        return { name: s.name, k, pts };
      });
      const box = canvas.parentElement;
      if (all.length === 0) {
        box.style.display = 'none';
        empty.style.display = '';
        empty.textContent = `No cell of ${chart.title} on ${dist} has a defined ulp error.`;
      } else {
        box.style.display = '';
        empty.style.display = 'none';
      }
      const ns = all.map(p => p.n);
      const span = all.length ? Math.max(1, Math.log10(Math.max(...ns)) - Math.log10(Math.min(...ns))) : 1;
      const step = 0.025 * span;
      const sets = datasets.map(d => ({
        label: d.name,
        data: d.pts.map(p => ({ x: p.n * Math.pow(10, (d.k - (K - 1) / 2) * step), y: shown(p.v), label: p.label })),
        showLine: true, borderWidth: 1.5, pointRadius: 5, pointHoverRadius: 7, pointBorderWidth: 1.5,
        pointStyle: styles[d.k % styles.length], backgroundColor: 'rgba(0,0,0,0)',
        borderColor: palette[d.k % palette.length]
      }));
      const xs = ns.length ? ns : [1];
      const half = (K / 2 + 1) * step;
      const scales = {
        x: { type: 'logarithmic', title: { display: true, text: 'n' },
             min: Math.min(...xs) / Math.pow(10, half), max: Math.max(...xs) * Math.pow(10, half),
             ticks: { autoSkip: false, maxRotation: 0, callback: (v) => { const e = Math.log10(v); return Math.abs(e - Math.round(e)) < 1e-9 ? number(v) : ''; } } },
        y: ulpAxis(all.length ? all.map(p => p.v) : [1])
      };
      const old = evn.find(c => c.canvas === canvas);
      if (old) {
        old.data.datasets = sets;
        old.options.scales = scales;
        old.update();
        // A hidden chart is not drawn again: what it says it shows is nothing.
        if (all.length === 0) Object.assign(canvas.dataset, { points: '0', front: '0', ink: '0' });
      } else {
        evn.push(new Chart(canvas, { type: 'scatter', data: { datasets: sets },
          options: Object.assign({}, common, { scales, plugins: { tooltip, legend } }), plugins: [drawn] }));
      }
    }
  }
  const pick = document.getElementById('error-vs-n-dist');
  if (pick) pick.addEventListener('change', () => errorVsN(pick.value));
  errorVsN('*');

  // Accuracy against throughput: one point per kernel; the Pareto front is
  // a dashed black line through the kernels that no other beats on both.
  for (const chart of data.accuracy_vs_throughput) {
    const sets = chart.series.map((s, k) => ({
      label: s.name, data: s.points.map(p => ({ x: p[0], y: shown(p[1]), label: p[2] })),
      pointRadius: 6, pointHoverRadius: 8, pointBorderWidth: 2, pointStyle: styles[k % styles.length],
      backgroundColor: 'rgba(0,0,0,0)', borderColor: palette[k % palette.length]
    }));
    sets.push({ label: 'Pareto front', front: true, data: chart.front.map(p => ({ x: p[0], y: shown(p[1]), label: p[2] })),
                showLine: true, borderDash: [6, 4], borderWidth: 1.5, borderColor: '#000', backgroundColor: 'rgba(0,0,0,0)',
                pointRadius: 10, pointBorderWidth: 1, pointStyle: 'circle' });
    new Chart(document.getElementById(chart.id), { type: 'scatter', data: { datasets: sets },
      options: Object.assign({}, common, {
        scales: { x: { type: 'linear', title: { display: true, text: 'GB/s (higher is faster)' },
                       grace: '5%', ticks: { maxRotation: 0 } },
                  y: ulpAxis(chart.series.flatMap(s => s.points.map(p => p[1]))) },
        plugins: { tooltip, legend } }), plugins: [drawn] });
  }
})();
)";

// Sorting (click a heading; again to reverse) and filtering (a box per
// column: text matches anywhere, case-insensitive; numbers also take
// <, <=, >, >=, = and a value) of the cell table.
inline constexpr const char* kTableScript = R"(
(function () {
  const table = document.getElementById('cells');
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const heads = Array.from(table.tHead.rows[0].cells);
  const boxes = Array.from(table.tHead.rows[1].querySelectorAll('input'));
  const count = document.getElementById('cells-shown');
  const value = (row, i) => {
    const td = row.cells[i];
    if (td.dataset.v !== undefined) return parseFloat(td.dataset.v);
    return heads[i].dataset.num ? NaN : td.textContent;
  };
  let sorted = -1, ascending = true;
  heads.forEach((th, i) => th.addEventListener('click', () => {
    ascending = sorted === i ? !ascending : true;
    sorted = i;
    heads.forEach(h => h.classList.remove('sorted-asc', 'sorted-desc'));
    th.classList.add(ascending ? 'sorted-asc' : 'sorted-desc');
    const sign = ascending ? 1 : -1;
    const keyed = rows.map((r, k) => [value(r, i), k, r]);
    keyed.sort((a, b) => {
      const an = typeof a[0] === 'number' && isNaN(a[0]), bn = typeof b[0] === 'number' && isNaN(b[0]);
      if (an !== bn) return an ? 1 : -1;  // n/a last either way
      if (!an && a[0] !== b[0]) return (a[0] < b[0] ? -1 : 1) * sign;
      return a[1] - b[1];
    });
    for (const [, , r] of keyed) body.appendChild(r);
  }));
  const test = (text, i) => {
    text = text.trim();
    if (!text) return () => true;
    const m = heads[i].dataset.num && text.match(/^(<=|>=|<|>|=)\s*(\S+)$/);
    if (m) {
      const x = parseFloat(m[2]);
      const cmp = { '<': (v) => v < x, '<=': (v) => v <= x, '>': (v) => v > x, '>=': (v) => v >= x, '=': (v) => v === x }[m[1]];
      return (row) => { const v = value(row, i); return !isNaN(v) && cmp(v); };
    }
    const needle = text.toLowerCase();
    return (row) => row.cells[i].textContent.toLowerCase().includes(needle);
  };
  const filter = () => {
    const tests = boxes.map((b, i) => test(b.value, i));
    let shown = 0;
    for (const r of rows) {
      const ok = tests.every(t => t(r));
      r.style.display = ok ? '' : 'none';
      shown += ok;
    }
    count.textContent = shown;
  };
  boxes.forEach(b => b.addEventListener('input', filter));
})();
)";

}  // namespace ulpscope::html
