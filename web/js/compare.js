/*
 * The compare view (#/compare/VIEW?devices=UUID,UUID): one result of two or
 * more devices side by side on one chart — memory curves, instruction
 * latencies, dual-issue patterns, model validation — and, as tables with a
 * column per device (compare_tables.js), the memory result's L2
 * partitions, distributed shared memory and asynchronous copies, the
 * tensor cores' TFLOP/s, and the control-code result's issue order beside
 * the banks result's reuse cache. Any number of devices; without
 * ?devices= every device the daemon knows is compared. A device without
 * the view's result is named, with the API's reason, and left out; one
 * whose result predates a member shows "not measured" in that column.
 */

const COMPARE_VIEWS = {
  memory: 'Memory hierarchy',
  latency: 'Instruction latency',
  'dual-issue': 'Dual issue',
  'model-validation': 'Model validation',
  'control-codes': 'Issue order and reuse cache',
};

/* Results a view reads besides its own, fetched per device; a device
 * without one gets null there (its column says "not measured"). */
const COMPARE_ALSO = { 'control-codes': ['banks'] };

function compareMemory(body, docs) {
  const { box, canvas } = chartBox('Load latency against footprint, every device', 'tall');
  body.append(el('p', { class: 'hint', text: 'Solid: .ca loads (L1 and L2); dashed: .cg loads (L2 only); each device has its own colour and point shape (see the legend); dashed verticals: cache capacities, in each device\'s colour.' }), box,
    ...docs.flatMap((d) => failedCurves(d.doc, d.name)));
  memoryChart(canvas, docs.flatMap((d) => memoryDatasets(d.doc, d.color, d.name, true, d.pointStyle)), { legendMarkers: false, pointStyles: true });
  body.append(el('div', { class: 'scroll' }, Object.assign(dataTable([
    { head: 'Device', value: (d) => d.name },
    ...['ca', 'cg'].map((load) => ({
      head: `.${load} levels`,
      // a level a line
      value: (d) => (Array.isArray(d.doc.levels?.[load])
        ? el('span', {}, d.doc.levels[load].flatMap((lv, i, all) => [i ? el('br') : null,
          `${cacheName(load, lv.level, i === all.length - 1 && lv.up_to_bytes === null)} ${fmtNum(lv.cycles, 3)} cyc${lv.up_to_bytes ? ` ≤ ${fmtBytes(lv.up_to_bytes)}` : ''}`]))
        : '—'),
    })),
    {
      head: 'Device memory, caches evicted (.ca / .cg)', cls: 'num',
      value: (d) => fmtFigures([d.doc.device_memory_cycles?.ca, d.doc.device_memory_cycles?.cg], 'cyc', true),
    },
    { head: 'Shared memory', cls: 'num', value: (d) => fmtFigures([d.doc.shared_cycles], 'cyc', true), title: (d) => figureTitle(d.doc.shared_cycles) },
  ], docs, 'Cache levels'), { id: 'compare-levels' })),
  el('p', { class: 'hint', text: 'A load\'s last level, past the L2, is the curve\'s end: a chase over data read just before, which still hits the L2 now and then, so a lower bound of device memory\'s latency. Device memory is a chase after the L2 was evicted.' }));
  body.append(el('h3', { text: 'Hopper memory features' }),
    sideBySide(docs, (d) => (d.doc.l2_partitions ? l2PartitionRows(d.doc.l2_partitions) : null), 'L2 partitions', 'compare-l2-partitions'),
    sideBySide(docs, (d) => (d.doc.block_placement ? blockPlacementRows(d.doc.block_placement) : null), 'Block placement (the order SMs get blocks)', 'compare-block-placement'),
    sideBySide(docs, (d) => dsmemPairs(d.doc.distributed_shared), 'Distributed shared memory (cycles a load; bytes a clock an SM)', 'compare-dsmem'),
    sideBySide(docs, (d) => asyncPairs(d.doc.async_copy), 'Asynchronous copies, global to shared', 'compare-async-copy'));
}

function compareLatency(body, docs) {
  const names = [];
  for (const d of docs) for (const e of d.doc.entries || []) if (!names.includes(e.name)) names.push(e.name);
  const entry = (d, n) => (d.doc.entries || []).find((e) => e.name === n);
  const { box, canvas } = chartBox('Dependent-chain latency of each instruction, every device', 'tall');
  body.append(box);
  makeChart(canvas, {
    type: 'bar',
    data: {
      labels: names,
      datasets: docs.map((d) => ({
        label: d.name,
        data: names.map((n) => median(entry(d, n)?.latency_cycles)),
        ...barStyle(d),
      })),
    },
    options: {
      scales: {
        y: { type: 'logarithmic', title: axisTitle('latency (SM cycles, log scale)') },
        x: { ticks: { autoSkip: false, maxRotation: 60, minRotation: 60 } },
      },
      plugins: { legend: { position: 'bottom' } },
    },
  });
  const rows = names.map((n) => ({ name: n, per: docs.map((d) => entry(d, n)) }));
  // the tensor-core steps' figures, where any device has them (results from
  // before the tensor entries have none: no empty columns for them)
  const has = (member) => docs.some((d) => (d.doc.entries || []).some((e) => e[member]));
  const tensorColumns = [['tflops', 'TFLOP/s'], ['throughput_one_warpgroup_per_clock_per_sm', '1 warpgroup /clk/SM']]
    .filter(([member]) => has(member));
  const columns = [{ head: 'Instruction', key: (r) => r.name, cell: (r) => el('code', { text: r.name }) }];
  docs.forEach((d, i) => {
    columns.push({ head: `${d.name}: latency`, cls: 'num', key: (r) => median(r.per[i]?.latency_cycles), cell: (r) => fmtFigure(r.per[i]?.latency_cycles) });
    columns.push({ head: `${d.name}: /clk/SM`, cls: 'num', key: (r) => median(r.per[i]?.throughput_per_clock_per_sm), cell: (r) => fmtFigure(r.per[i]?.throughput_per_clock_per_sm) });
    for (const [member, head] of tensorColumns) {
      columns.push({ head: `${d.name}: ${head}`, cls: 'num', key: (r) => median(r.per[i]?.[member]), cell: (r) => fmtFigure(r.per[i]?.[member]) });
    }
  });
  body.append(el('div', { class: 'scroll' }, sortableTable(columns, rows, 'Latency (cycles) and throughput (per clock per SM)', 'compare-latency-table')));
}

/* Each pattern's best rate over the warps-per-scheduler counts. */
function compareDualIssue(body, docs) {
  const keys = [];
  for (const d of docs) {
    for (const r of d.doc.results || []) {
      const k = `${r.pattern}|${r.operands}`;
      if (!keys.includes(k)) keys.push(k);
    }
  }
  const best = (d, k) => {
    const vals = (d.doc.results || []).filter((r) => `${r.pattern}|${r.operands}` === k)
      .map((r) => median(r.ffma_per_sm_clock)).filter((v) => v !== null);
    return vals.length ? Math.max(...vals) : null;
  };
  const { box, canvas } = chartBox('Best FFMA rate of each issue pattern, every device', 'tall');
  body.append(el('p', { class: 'hint', text: 'Each bar: the best of 1 to 4 warps per scheduler. Lines: each device\'s peak.' }), box);
  const peaks = [...new Set(docs.map((d) => d.doc.peak_ffma_per_sm_clock).filter((p) => typeof p === 'number'))];
  makeChart(canvas, {
    type: 'bar',
    data: {
      labels: keys.map((k) => k.split('|').map((s) => s.replace(/_/g, '-'))),
      datasets: [
        ...docs.map((d) => ({ type: 'bar', label: d.name, data: keys.map((k) => best(d, k)), ...barStyle(d), order: 2 })),
        ...peaks.map((p) => ({ type: 'line', label: `peak ${p}`, data: keys.map(() => p), borderColor: COLOR_BAD, pointRadius: 0, order: 0 })),
      ],
    },
    options: {
      scales: { y: { min: 0, title: axisTitle('FFMA per SM per clock') }, x: { ticks: { autoSkip: false } } },
      plugins: { legend: { position: 'bottom' } },
    },
  });
  body.append(el('ul', { class: 'verdicts' }, docs.map((d) =>
    el('li', {}, el('strong', { text: `${d.name}: ` }), d.doc.verdict || '—'))));
}

function compareValidation(body, docs) {
  const { box, canvas } = chartBox('Measured against predicted kernel time, every device', 'tall square');
  body.append(box);
  validationChart(canvas, docs.map((d) => ({
    label: d.name, data: validationPoints(d.doc), borderColor: d.color, backgroundColor: alpha(d.color, 0.7), pointStyle: d.pointStyle,
  })));
  const names = [];
  for (const d of docs) for (const k of d.doc.kernels || []) if (!names.includes(k.name)) names.push(k.name);
  const kernel = (d, n) => (d.doc.kernels || []).find((k) => k.name === n);
  const columns = [{ head: 'Kernel', value: (n) => el('code', { text: n }) }];
  for (const d of docs) {
    columns.push({ head: `${d.name}: measured`, cls: 'num', value: (n) => fmtSeconds(median(kernel(d, n)?.measured_s)) });
    columns.push({ head: `${d.name}: error`, cls: 'num', value: (n) => fmtPercent(kernel(d, n)?.rel_error, 0) });
  }
  body.append(kvList(docs.map((d) => [`${d.name}: geometric mean |error|`, fmtPercent(d.doc.gmae)])),
    el('div', { class: 'scroll' }, dataTable(columns, names, 'Per kernel')));
}

/* The issue-order rule (control codes) and the reuse cache (banks) of each
 * device: what each one's scheduler and operand cache do, side by side. */
function compareControlCodes(body, docs) {
  body.append(
    el('p', { class: 'hint', text: 'The issue-order experiment of the control-code probe and the reuse-cache questions of the banks probe; each device\'s own views have the timings behind them.' }),
    sideBySide(docs, (d) => issueOrderPairs(d.doc.meanings?.scheduler), 'Issue order (hits / decisions of each policy)', 'compare-issue-order'),
    sideBySide(docs, (d) => reuseCachePairs(d.also.banks?.reuse_cache), 'Reuse cache (banks result)', 'compare-reuse-cache'));
}

const COMPARE_RENDERERS = {
  memory: compareMemory,
  latency: compareLatency,
  'dual-issue': compareDualIssue,
  'model-validation': compareValidation,
  'control-codes': compareControlCodes,
};

function comparePicker(devices, chosen, view, names) {
  const boxes = devices.map((d) => {
    const input = el('input', { type: 'checkbox', value: d.uuid, checked: chosen.includes(d.uuid) });
    input.addEventListener('change', () => {
      const picked = [...document.querySelectorAll('#compare-devices input:checked')].map((i) => i.value);
      const q = new URLSearchParams();
      if (picked.length !== devices.length) q.set('devices', picked.join(','));
      window.location.hash = hashFor(['compare', view], q);
    });
    return el('label', { class: 'check' }, input, ` ${names.get(d.uuid)}${d.attached ? '' : ` (${d.host || 'stored'})`}`);
  });
  return el('fieldset', { id: 'compare-devices', class: 'devices-pick' }, el('legend', { text: 'Devices' }), boxes);
}

/* Why there is nothing to compare. */
function noComparison(devices, picked) {
  if (!devices.length) return 'No device is known here yet: no GPU is attached and no results were imported.';
  return picked.length ? 'None of the chosen devices has this result.' : 'Choose at least one device.';
}

async function renderCompare(main, route, ctx) {
  const view = COMPARE_VIEWS[route.parts[1]] ? route.parts[1] : 'memory';
  const inv = await loadInventory(5000);
  if (!ctx.alive()) return;
  const devices = Array.isArray(inv.devices) ? inv.devices : [];
  const names = deviceNames(devices);
  const asked = route.query.get('devices');
  const chosen = asked === null ? devices.map((d) => d.uuid) : asked.split(',').filter(Boolean);
  const keep = asked === null ? null : new URLSearchParams({ devices: asked });
  const tabs = el('nav', { class: 'tabs', 'aria-label': 'Result to compare' }, Object.entries(COMPARE_VIEWS).map(([v, t]) =>
    el('a', { href: hashFor(['compare', v], keep), class: v === view ? 'tab current' : 'tab', 'aria-current': v === view ? 'page' : null, 'data-view': v, text: t })));
  const body = el('div', { id: 'result', 'data-view': `compare-${view}`, class: 'result-body' });
  main.replaceChildren(el('section', {},
    el('h2', { text: `Compare: ${COMPARE_VIEWS[view]}` }),
    comparePicker(devices, chosen, view, names), tabs), el('section', {}, body));

  const picked = chosen.map((u) => devices.find((d) => d.uuid === u) || { uuid: u, name: shortUuid(u) });
  const result = (d, v) => api(`/api/v1/devices/${encodeURIComponent(d.uuid)}/${v}`);
  const got = await Promise.all(picked.map(async (d, i) => {
    try {
      const doc = await result(d, view);
      const also = {};
      for (const v of COMPARE_ALSO[view] || []) also[v] = await result(d, v).catch(() => null);
      // colour, point style and hatching: devices differ without colour too
      return { device: d, doc, also, ...seriesStyle(i), name: names.get(d.uuid) || d.name };
    } catch (e) {
      return { device: d, error: e, name: names.get(d.uuid) || d.name };
    }
  }));
  if (!ctx.alive()) return;
  const unreachable = got.find((g) => g.error?.status === 0);
  if (unreachable) throw unreachable.error; // no answer, so no device is known to lack the result
  const docs = got.filter((g) => g.doc);
  const missing = got.filter((g) => g.error);
  if (missing.length) {
    body.append(el('ul', { class: 'empty missing' }, missing.map((m) =>
      el('li', {}, el('strong', { text: `${m.name}: ` }), m.error.problem?.detail || m.error.message))));
  }
  if (!docs.length) {
    body.append(el('p', { class: 'empty', text: noComparison(devices, picked) }));
    markUpdated(); // the daemon answered
    return;
  }
  COMPARE_RENDERERS[view](body, docs);
  markUpdated();
}
