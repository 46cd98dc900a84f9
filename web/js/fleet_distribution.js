/*
 * One figure over a model's GPUs
 * (#/fleet/distribution?model=M&metric=NAME[&device=UUID]), from GET
 * /api/v1/fleet/distribution: a number as every GPU's value in sorted order
 * (x: the GPU's rank, y: its value), the bounds outside which a value is an
 * outlier as dashed lines, the median, outliers in the warning colour and
 * the device of the link marked and labelled; a category (the bank map, the
 * dual-issue verdict) as a bar per value of how many GPUs hold it. A click
 * on a point marks its GPU. The sorted values draw every GPU as a point,
 * from 10 to thousands, with nothing binned (docs/design.md, "Dashboard").
 */

/* The dataset of the GPU a distribution marks, and its label. */
function markedSet(point, text, color) {
  return {
    label: text,
    data: [point],
    pointStyle: 'triangle',
    pointRadius: 9,
    pointHoverRadius: 10,
    borderWidth: 2,
    borderColor: color,
    backgroundColor: 'transparent', // the GPU's own point shows through
    pointLabels: [text],
    device: point.uuid,
    order: 0,
  };
}

function numberChart(canvas, dist, device, compared) {
  const warn = cssVar('--warn');
  const fmt = (v) => fmtFleetValue(v, dist.unit);
  const points = dist.values.map((v, i) => ({ x: i + 1, y: v.value, uuid: v.uuid, host: v.host, outlier: v.outlier }));
  const radius = points.length > 400 ? 2 : 3.5;
  const n = points.length;
  const datasets = [
    { label: 'GPU within the bounds', data: points.filter((p) => !p.outlier), backgroundColor: alpha(PALETTE[0], 0.8), borderColor: PALETTE[0], pointRadius: radius, order: 2 },
    { label: 'outlier', data: points.filter((p) => p.outlier), backgroundColor: warn, borderColor: warn, pointRadius: radius + 1.5, order: 1 },
    { ...hline(`median: ${fmt(dist.median)}`, dist.median, 0, n + 1, cssVar('--muted')), order: 3 },
  ];
  if (compared) {
    datasets.push({ ...hline(`high bound: ${fmt(dist.high)}`, dist.high, 0, n + 1, warn), order: 3 });
    datasets.push({ ...hline(`low bound: ${fmt(dist.low)}`, dist.low, 0, n + 1, warn), order: 3 });
  }
  const mine = points.find((p) => p.uuid === device);
  if (mine) datasets.push(markedSet(mine, `${mine.uuid} (${mine.host}): ${fmt(mine.y)}`, cssVar('--fg')));
  return makeChart(canvas, {
    type: 'scatter',
    data: { datasets },
    plugins: [pointLabels],
    options: {
      scales: {
        x: { min: 0, max: n + 1, ticks: { precision: 0, callback: (v) => (v >= 1 && v <= n ? fmtCount(v) : '') }, title: axisTitle(`the model's ${n} GPUs, sorted by value`) },
        y: { title: axisTitle(dist.unit ? dist.unit.replace(/_/g, ' ') : 'value'), ticks: { callback: (v) => fmt(v) } },
      },
      plugins: {
        legend: { position: 'bottom' },
        tooltip: {
          callbacks: {
            label: (c) => (c.raw.uuid ? `${c.raw.uuid} (${c.raw.host}): ${fmt(c.parsed.y)}${c.raw.outlier ? ', an outlier' : ''}` : c.dataset.label),
          },
        },
      },
      onClick: (ev, elements, chart) => {
        const hit = elements.map((e) => chart.data.datasets[e.datasetIndex].data[e.index]).find((p) => p.uuid);
        if (hit) window.location.hash = distributionHash(dist.model, dist.metric, hit.uuid);
      },
    },
  });
}

/* A bar per value, in the API's order: how many GPUs hold it (the one tally
 * the page makes; the norm's bar is the API's mode_devices). */
function categoryChart(canvas, dist, device) {
  const warn = cssVar('--warn');
  const held = new Map();
  for (const v of dist.values) {
    const h = held.get(v.text) || { devices: 0, outlier: false };
    h.devices += 1;
    h.outlier = h.outlier || v.outlier;
    held.set(v.text, h);
  }
  const labels = [...held.keys()];
  const mine = dist.values.find((v) => v.uuid === device);
  return makeChart(canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: [{
        label: 'GPUs holding the value',
        data: labels.map((t) => held.get(t).devices),
        backgroundColor: labels.map((t) => (held.get(t).outlier ? warn : alpha(PALETTE[0], 0.8))),
        borderColor: cssVar('--fg'),
        borderWidth: labels.map((t) => (mine && mine.text === t ? 2 : 0)),
        pointLabels: labels.map((t) => (mine && mine.text === t ? `${mine.uuid} (${mine.host})` : null)),
        device: mine ? mine.uuid : null,
      }],
    },
    plugins: [pointLabels],
    options: {
      indexAxis: 'y',
      scales: { x: { min: 0, ticks: { precision: 0 }, title: axisTitle('GPUs') }, y: { ticks: { autoSkip: false } } },
      plugins: { legend: { display: false } },
    },
  });
}

function figurePicker(model, figures, metric, device) {
  const select = el('select', { id: 'fleet-metric' },
    figures.map((f) => el('option', { value: f.metric, text: `${f.metric}${f.outliers ? ` (${f.outliers} outlier${f.outliers > 1 ? 's' : ''})` : ''}` })));
  select.value = metric;
  select.addEventListener('change', () => { window.location.hash = distributionHash(model, select.value, device); });
  return el('form', { class: 'inline-form', onsubmit: (e) => e.preventDefault() },
    el('label', { for: 'fleet-metric', text: 'Figure' }), select);
}

function distributionFacts(dist, rule, compared) {
  const fmt = (v) => fmtFleetValue(v, dist.unit);
  if (dist.categorical) {
    const norm = dist.mode_devices * 2 > dist.n;
    return kvList([
      ['GPUs', dist.n],
      [norm ? 'Norm' : 'Most common (no norm: not held by more than half)', dist.mode],
      ['GPUs holding it', `${dist.mode_devices} of ${dist.n}`],
      ['Outliers', outlierCount(dist.outliers)],
    ]);
  }
  return kvList([
    ['GPUs', dist.n],
    ['Median', fmt(dist.median)],
    ['MAD', fmt(dist.mad)],
    ['Min / max', `${fmt(dist.min)} / ${fmt(dist.max)}`],
    ['Bounds', compared ? `${fmt(dist.low)} to ${fmt(dist.high)}` : `none: fewer than ${rule.min_devices} GPUs (min_devices)`],
    ['Outliers', outlierCount(dist.outliers)],
  ]);
}

/* "Marked: UUID on HOST, VALUE: an outlier", with its links. */
function markedLine(dist, device) {
  if (!device) return el('p', { class: 'hint', text: 'Click a point to mark its GPU; an outlier\'s link marks it.' });
  const v = dist.values.find((x) => x.uuid === device);
  if (!v) return el('p', { class: 'empty', id: 'fleet-marked', text: `${device} has no value of this figure.` });
  const value = dist.categorical ? v.text : fmtFleetValue(v.value, dist.unit);
  return el('p', { id: 'fleet-marked', class: 'provenance' }, 'Marked: ',
    el('a', { class: 'mono', href: figureResultHash(v.uuid, dist.metric, v.job_id), text: v.uuid }),
    ` on ${v.host}: ${value}`, v.outlier ? el('strong', { class: 'warn', text: ', an outlier' }) : ', like its peers',
    ' · ', jobLink(v.job_id));
}

/* Every GPU's value, drawn when opened (a fleet may have thousands). */
function valuesTable(dist) {
  const details = el('details', { class: 'runs' }, el('summary', { text: `Every GPU (${dist.values.length})` }));
  details.addEventListener('toggle', () => {
    if (!details.open || details.querySelector('table')) return;
    details.append(el('div', { class: 'scroll' }, dataTable([
      { head: 'Device', value: (v) => el('a', { class: 'mono', href: figureResultHash(v.uuid, dist.metric, v.job_id), text: v.uuid }) },
      { head: 'Host', value: (v) => v.host },
      { head: 'Value', cls: 'num', value: (v) => (dist.categorical ? v.text : fmtFleetValue(v.value, dist.unit)) },
      { head: 'Outlier', value: (v) => (v.outlier ? el('span', { class: 'warn', text: 'yes' }) : 'no') },
      { head: 'Job', value: (v) => jobLink(v.job_id) },
    ], dist.values, 'In the API\'s order (sorted by value)')));
  });
  return details;
}

async function renderFleetDistribution(main, route, ctx) {
  const model = route.query.get('model') || '';
  const metric = route.query.get('metric') || '';
  const device = route.query.get('device') || '';
  const body = el('div', { id: 'fleet-dist', class: 'result-body', 'data-metric': metric });
  main.replaceChildren(el('section', {},
    el('p', { class: 'provenance' }, el('a', { href: fleetHash(model, ''), text: `← Fleet${model ? `: ${model}` : ''}` })),
    el('h2', { text: `Distribution over the GPUs of ${model || '…'}` }), body));
  let dist;
  let fleet;
  try {
    [dist, fleet] = await Promise.all([
      fleetApi('/api/v1/fleet/distribution', { model, metric }),
      fleetApi('/api/v1/fleet', { model }),
    ]);
  } catch (e) {
    if (!ctx.alive()) return;
    if (e.status === 0) throw e; // unreachable: nothing is known about the figure
    body.replaceChildren(el('p', { class: 'empty missing' }, `${metric}: `, e.problem?.detail || e.message, '. ',
      el('a', { href: fleetHash(model, ''), text: 'Pick a figure on the fleet page' }), '.'));
    if (e.status === 404 || e.status === 400) markUpdated(); // the daemon answered
    else setStatus(e.message, true);
    return;
  }
  if (!ctx.alive()) return;
  const figures = fleet.models[0]?.figures || [];
  const compared = dist.n >= fleet.rule.min_devices;
  const { box, canvas } = chartBox(`${metric} over the GPUs of ${model}`, dist.categorical ? '' : 'tall');
  body.append(
    figurePicker(model, figures, metric, device),
    distributionFacts(dist, fleet.rule, compared),
    markedLine(dist, device),
    box,
    el('p', { class: 'hint', text: dist.categorical
      ? 'Each bar: how many GPUs of the model hold that value; a value the norm does not hold is drawn in the warning colour.'
      : 'Each point a GPU, sorted by value; outliers in the warning colour; dashed: the median and the bounds outside which a value is an outlier.' }),
    valuesTable(dist));
  if (dist.categorical) categoryChart(canvas, dist, device);
  else numberChart(canvas, dist, device, compared);
  markUpdated();
}
