/*
 * Charts: the dashboard's settings for Chart.js (Debian's libjs-chart.js,
 * bundled ahead of these files by the Makefile) and the few helpers the
 * views share: a registry so a view's charts are destroyed when the view
 * changes, a byte axis on a log scale, marker lines, point labels, a palette.
 *
 * Every chart is drawn without animation (a view with a few thousand points
 * draws at once); line charts with many points parse nothing and may be
 * decimated. Colours come from style.css's variables, so the light and dark
 * schemes both read.
 */

/* Series colours, distinguishable in both schemes; device i gets PALETTE[i]. */
const PALETTE = ['#2f6fdb', '#d9480f', '#2b8a3e', '#9c36b5', '#f59f00', '#0b7285', '#c2255c', '#5c940d'];
const COLOR_BAD = '#e03131';
/* Point styles, so that series i and i + PALETTE.length (device 1 and 9 of
 * a comparison, kernel 1 and 9 of the model validation) differ in shape. */
const POINT_STYLES = ['circle', 'rect', 'triangle', 'rectRot', 'star', 'crossRot'];

/* Series i's colour and point style: the first 48 series all differ. */
function seriesStyle(i) {
  return {
    color: PALETTE[i % PALETTE.length],
    pointStyle: POINT_STYLES[Math.floor(i / PALETTE.length) % POINT_STYLES.length],
  };
}

const chartState = {
  live: [],             // the current view's charts, destroyed on a view change
};

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/* A colour with alpha (PALETTE entries are #rrggbb). */
function alpha(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}

function initCharts() {
  const d = Chart.defaults;
  d.animation = false;
  d.responsive = true;
  d.maintainAspectRatio = false;
  d.font.family = getComputedStyle(document.body).fontFamily;
  d.font.size = 12;
  d.color = cssVar('--muted');
  d.borderColor = cssVar('--line');
  d.plugins.legend.labels.boxWidth = 14;
  d.plugins.tooltip.mode = 'nearest';
  d.elements.point.radius = 2.5;
  d.elements.line.borderWidth = 2;
}

/* A chart on canvas, registered with the view. */
function makeChart(canvas, config) {
  const chart = new Chart(canvas, config);
  chartState.live.push(chart);
  return chart;
}

function destroyCharts() {
  for (const c of chartState.live.splice(0)) c.destroy();
}

/* A canvas in a sized box (Chart.js fills its parent); cls "tall", "short". */
function chartBox(label, cls = '') {
  const canvas = el('canvas', { role: 'img', 'aria-label': label });
  return { box: el('div', { class: `chart-box ${cls}`.trim() }, canvas), canvas };
}

function axisTitle(text) {
  return { display: true, text };
}

/* Bytes on a log2-spaced axis: ticks at 1 KiB, 4 KiB, 16 KiB, ...; on a
 * narrow chart Chart.js skips those that would overprint their neighbours. */
function bytesAxis(title) {
  return {
    type: 'logarithmic',
    title: axisTitle(title),
    afterBuildTicks(axis) {
      const ticks = [];
      for (let v = 2 ** Math.ceil(Math.log2(Math.max(1, axis.min))); v <= axis.max; v *= 4) ticks.push({ value: v });
      axis.ticks = ticks;
    },
    ticks: { callback: (v) => fmtBytes(v), autoSkip: true, autoSkipPadding: 6, maxRotation: 0 },
  };
}

/* Seconds on a log axis, ticks at 1, 2 and 5 times a power of ten. */
function secondsAxis(title) {
  return {
    type: 'logarithmic',
    title: axisTitle(title),
    afterBuildTicks(axis) {
      const ticks = [];
      for (let e = Math.floor(Math.log10(axis.min)); 10 ** e <= axis.max; e += 1) {
        for (const m of [1, 2, 5]) {
          const v = m * 10 ** e;
          if (v >= axis.min && v <= axis.max) ticks.push({ value: v });
        }
      }
      axis.ticks = ticks;
    },
    ticks: { callback: (v) => fmtSeconds(v), autoSkip: false, maxRotation: 0 },
  };
}

/* A line from p0 to p1 ({x, y}) as a dataset of a scatter/line chart,
 * marked as a marker (not data): a cache capacity, a smallest safe stall,
 * a fleet figure's bounds. */
function segment(label, p0, p1, color) {
  return {
    label,
    type: 'line',
    data: [p0, p1],
    borderColor: color,
    backgroundColor: color,
    borderDash: [5, 4],
    borderWidth: 1.5,
    pointRadius: 0,
    pointHitRadius: 6,
    showLine: true,
    fill: false,
    marker: true,
  };
}

function vline(label, x, y0, y1, color) {
  return segment(label, { x, y: y0 }, { x, y: y1 }, color);
}

function hline(label, y, x0, x1, color) {
  return segment(label, { x: x0, y }, { x: x1, y }, color);
}

/* A plugin writing a dataset's pointLabels[i] (text or null) beside its
 * point or bar i, kept inside the chart area: the GPU a fleet chart marks.
 * Chart.js has no labels of its own; give it in the config's plugins. */
const pointLabels = {
  id: 'pointLabels',
  afterDatasetsDraw(chart) {
    const { ctx, chartArea } = chart;
    ctx.save();
    ctx.font = `600 12px ${Chart.defaults.font.family}`;
    ctx.fillStyle = cssVar('--fg');
    ctx.textBaseline = 'middle';
    chart.data.datasets.forEach((ds, i) => {
      const meta = chart.getDatasetMeta(i);
      if (!Array.isArray(ds.pointLabels) || meta.hidden) return;
      meta.data.forEach((elem, k) => {
        const text = ds.pointLabels[k];
        if (!text) return;
        const { x, y } = elem.getProps(['x', 'y'], true);
        const right = x + 12 + ctx.measureText(text).width <= chartArea.right;
        ctx.textAlign = right ? 'left' : 'right';
        ctx.fillText(text, right ? x + 12 : x - 12, Math.max(chartArea.top + 8, y - 12));
      });
    });
    ctx.restore();
  },
};

/* A tooltip line "label: (x, y)" with formatters. */
function pointLabel(fx, fy) {
  return (ctx) => `${ctx.dataset.label}: ${fx(ctx.parsed.x)}, ${fy(ctx.parsed.y)}`;
}
