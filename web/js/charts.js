/*
 * Charts: the dashboard's settings for Chart.js (Debian's libjs-chart.js,
 * bundled ahead of these files by the Makefile) and the few helpers the
 * views share: a registry so a view's charts are destroyed when the view
 * changes, a byte axis on a log scale, marker lines, point labels, a palette
 * with point styles and bar hatchings that tell series apart without colour.
 *
 * Every chart is drawn without animation (a view with a few thousand points
 * draws at once); line charts with many points parse nothing and may be
 * decimated. Colours come from style.css's variables, so the light and dark
 * schemes both read.
 */

/* Series colours, distinguishable in both schemes; device i gets PALETTE[i]. */
const PALETTE = ['#2f6fdb', '#d9480f', '#2b8a3e', '#9c36b5', '#f59f00', '#0b7285', '#c2255c', '#5c940d'];
const COLOR_BAD = '#e03131';
/* Point styles and bar hatchings: series i gets POINT_STYLES[i % 7] and
 * HATCHES[i % 7] beside PALETTE[i % 8], so that shape or hatching alone
 * tells the first 7 series (devices of a comparison, kernels of a model
 * validation) apart, for a colour-blind reader and on a greyscale print,
 * and with the colour the first 56 (7 and 8 share no factor). */
const POINT_STYLES = ['circle', 'rect', 'triangle', 'rectRot', 'crossRot', 'star', 'cross'];
const HATCHES = ['solid', 'diagonal', 'dots', 'horizontal', 'grid', 'vertical', 'back-diagonal'];

/* Series i's colour, point style and hatching. */
function seriesStyle(i) {
  return {
    color: PALETTE[i % PALETTE.length],
    pointStyle: POINT_STYLES[i % POINT_STYLES.length],
    hatch: HATCHES[i % HATCHES.length],
  };
}

/* The strokes of each hatching of lines in a tile of side 1 ('dots' is a
 * dot in its middle): lines run past the tile's corners so that
 * neighbouring tiles join into unbroken stripes. */
const HATCH_LINES = {
  diagonal: [[-1, 1, 1, -1], [0, 1, 1, 0], [0, 2, 2, 0]],
  'back-diagonal': [[0, 0, 1, 1], [0, -1, 2, 1], [-1, 0, 1, 2]],
  horizontal: [[0, 0.5, 1, 0.5]],
  vertical: [[0.5, 0, 0.5, 1]],
  grid: [[0, 0.5, 1, 0.5], [0.5, 0, 0.5, 1]],
};
const HATCH_TILE = 8; // CSS px: two stripes still show in a legend's 14 px box

/* A fill of `color` hatched in the panel's colour, as a CanvasPattern
 * (Chart.js takes one wherever it takes a colour, legend boxes included);
 * 'solid' is the plain colour. The tile is drawn at the screen's pixel
 * density and scaled back, so the stripes stay sharp. */
function hatchFill(color, hatch) {
  const fill = alpha(color, 0.85);
  if (hatch === 'solid' || !HATCHES.includes(hatch)) return fill;
  const dpr = window.devicePixelRatio || 1;
  const tile = document.createElement('canvas');
  tile.width = tile.height = Math.round(HATCH_TILE * dpr);
  const g = tile.getContext('2d');
  g.scale(tile.width, tile.height);
  g.fillStyle = fill;
  g.fillRect(0, 0, 1, 1);
  g.fillStyle = g.strokeStyle = cssVar('--panel');
  g.lineWidth = 1.5 / HATCH_TILE;
  g.beginPath();
  for (const [x0, y0, x1, y1] of HATCH_LINES[hatch] || []) {
    g.moveTo(x0, y0);
    g.lineTo(x1, y1);
  }
  g.stroke();
  if (hatch === 'dots') {
    g.beginPath();
    g.arc(0.5, 0.5, 0.2, 0, 2 * Math.PI);
    g.fill();
  }
  const pattern = g.createPattern(tile, 'repeat');
  pattern.setTransform(new DOMMatrix().scaleSelf(1 / dpr));
  return pattern;
}

/* A bar series' look from seriesStyle(): its colour under its hatching,
 * outlined in the colour, so that bars differ without colour too; `hatch`
 * names the hatching (the browser test reads it). */
function barStyle({ color, hatch }) {
  return { backgroundColor: hatchFill(color, hatch), borderColor: color, borderWidth: 1, hatch };
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
