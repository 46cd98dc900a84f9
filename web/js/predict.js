/*
 * The kernel-time predictor (#/predict?device=UUID): a kernel's time on a
 * device by the daemon's MWP/CWP model (docs/model.md), from its PTX (pasted
 * or uploaded, with the integer kernel parameters its loops need) or from
 * per-warp instruction counts, and its launch shape.
 *
 * The page computes nothing: the form becomes one POST
 * /api/v1/model/predict, and the answer is shown as the daemon gives it:
 * the time, every member of its "prediction" (a row each, members this page
 * does not know yet included, so none is hidden), the occupancy, the counts
 * the model used (derived from the PTX, or as given), and each hardware
 * parameter with the job that measured it, linked. The chart puts a
 * repetition's candidates side by side (the case's formula and the three
 * throughput floors), the largest of which sets the time: the one thing the
 * table makes hard to see.
 *
 * Refusals are the server's: a 400 shows its detail and marks the field it
 * names (problem+json "field", e.g. kernel.ptx -> #pr-ptx); a 409 (the
 * device lacks a measurement) shows the detail, which names the probe to
 * run, with a link to the device's page for that probe and, for a GPU
 * attached here, a button that submits it. Only the device is in the
 * address: a PTX file is too big for one.
 */

const pred = { run: 0 };

/* Per-warp instruction classes of the request (KernelDescription.per_warp). */
const PER_WARP_FIELDS = [
  ['fp32', 'FP32'], ['fp64', 'FP64'], ['int', 'Integer'], ['sfu', 'SFU'], ['conv', 'Conversions'],
  ['shared', 'Shared memory'], ['coalesced', 'Global, coalesced'], ['uncoalesced', 'Global, uncoalesced'],
  ['sync', 'Barriers'], ['sync_mem', 'Barriers after a global load'], ['stores', 'Global stores (of the above)'],
  ['mem_periods', 'Memory periods'],
];

/* Optional numbers of the kernel, under "More". */
const MORE_FIELDS = [
  ['smem', 'Dynamic shared memory per block (bytes)', '0'],
  ['static_smem', 'Static shared memory per block (bytes)', 'the PTX\'s .shared declarations (per-warp counts: 0)'],
  ['launches', 'Launches', '1'],
  ['transfer_bytes', 'Bytes copied from the host', '0'],
  ['cache.l1_hit', 'L1 hit rate (0 to 1, from gpuprobe trace cache)', 'none: all from device memory'],
  ['cache.l2_hit', 'L2 hit rate of the L1\'s misses', ''],
  ['cache.l2_hit_store', 'L2 hit rate of stores', '0'],
];

/* The prediction's members in the model's order, grouped; [key, meaning,
 * unit]. A unit scales the value's text: '' and cycles and warps are
 * plain numbers. */
const PREDICTION_GROUPS = [
  ['Launch and occupancy', [
    ['warps_per_block', 'Warps per block', 'warps'],
    ['blocks_per_sm', 'Blocks per SM the occupancy allows', ''],
    ['active_sms', 'SMs with blocks', ''],
    ['active_blocks_per_sm', 'Blocks per SM at once', ''],
    ['n_active_warps', 'Active warps per SM (N)', 'warps'],
    ['rep', 'Repetitions (#Rep)', ''],
  ]],
  ['Memory', [
    ['mem_insts', 'Global memory instructions per warp', ''],
    ['periods', 'Memory periods per warp', ''],
    ['loads_per_period', 'Loads a load period waits for', ''],
    ['lat_period', 'A load period\'s wait: its slowest load, expected', 'cycles'],
    ['lat_load', 'A load\'s latency over the levels', 'cycles'],
    ['lat_store', 'A store\'s latency', 'cycles'],
    ['l2_fraction', 'Sectors crossing the L2', '%'],
    ['dram_fraction', 'Sectors from device memory', '%'],
    ['mem_l_coal', 'Latency, coalesced', 'cycles'],
    ['mem_l_uncoal', 'Latency, uncoalesced', 'cycles'],
    ['w_coal', 'Weight of coalesced accesses', ''],
    ['w_uncoal', 'Weight of uncoalesced accesses', ''],
    ['mem_l', 'Mem_L', 'cycles'],
    ['departure_delay', 'Departure delay', 'cycles'],
    ['mem_cycles', 'Mem: memory cycles per warp', 'cycles'],
  ]],
  ['MWP (memory warp parallelism)', [
    ['mwp_without_bw', 'MWP without bandwidth (Mem_L / departure)', 'warps'],
    ['load_bytes_per_warp', 'Bytes per memory instruction of a warp', 'B'],
    ['dram_bytes_per_warp', 'Of them from device memory', 'B'],
    ['l2_bytes_per_warp', 'Of them crossing the L2', 'B'],
    ['bw_per_warp', 'Bandwidth one warp uses', 'B/s'],
    ['mwp_peak_dram', 'MWP device memory allows', 'warps'],
    ['mwp_peak_l2', 'MWP the L2 allows', 'warps'],
    ['mwp_peak_bw', 'MWP_peak_BW', 'warps'],
    ['mwp', 'MWP', 'warps'],
  ]],
  ['Computation and CWP', [
    ['comp_serial', 'Every class\'s issue cycles summed (the paper\'s Comp)', 'cycles'],
    ['comp_dispatch', 'All instructions at the dispatch rate', 'cycles'],
    ['comp_pipe', 'The busiest pipe', 'cycles'],
    ['comp_cycles', 'Comp: computation cycles per warp', 'cycles'],
    ['cwp_full', 'CWP before the warp limit', 'warps'],
    ['cwp', 'CWP', 'warps'],
  ]],
  ['One repetition', [
    ['case', 'Case', ''],
    ['case_meaning', 'The case means', 'text'],
    ['case_cycles_per_rep', 'The case\'s formula', 'cycles'],
    ['floor_departure', 'Floor: the memory pipeline\'s departures', 'cycles'],
    ['floor_dram', 'Floor: device-memory bandwidth', 'cycles'],
    ['floor_l2', 'Floor: L2 bandwidth', 'cycles'],
    ['exec_cycles_per_rep', 'A repetition (the largest of the four)', 'cycles'],
    ['bound', 'Bound by', 'text'],
  ]],
  ['Barriers', [
    ['sync_barriers', 'Barriers charged per warp', ''],
    ['sync_mwp', 'Warps a barrier serialises', 'warps'],
    ['sync_cycles', 'Synchronisation cycles', 'cycles'],
  ]],
  ['Time', [
    ['exec_cycles', 'Execution cycles (a repetition x #Rep)', 'cycles'],
    ['cycles', 'Cycles of one launch', 'cycles'],
    ['kernel_s', 'One launch', 's'],
    ['kernels_s', 'Every launch', 's'],
    ['transfer_s', 'Host transfers', 's'],
    ['total_s', 'Total', 's'],
  ]],
];

/* What each "bound" of the answer names. */
const BOUND_TEXT = {
  latency: 'memory latency (too few warps to hide it)',
  memory: 'memory',
  compute: 'computation',
  departure: 'the memory pipeline\'s departure rate',
  dram: 'device-memory bandwidth',
  l2: 'L2 bandwidth',
};

/* Parameter names of the answer, in words; issue_CLASS by rule. */
const PARAM_NAMES = {
  sm_count: 'SMs',
  clock_mhz: 'SM clock',
  mem_latency: 'Device-memory latency',
  l1_latency: 'L1 latency',
  l2_latency: 'L2 latency',
  delay_coal: 'Departure delay, coalesced',
  delay_uncoal: 'Departure delay, uncoalesced (a transaction)',
  bandwidth: 'Device-memory bandwidth',
  link_bandwidth: 'Host link bandwidth',
  l2_bandwidth: 'L2 bandwidth',
  dram_granule: 'Device-memory granule',
  issue_slot: 'Dispatch rate',
};

function paramName(key) {
  if (PARAM_NAMES[key]) return PARAM_NAMES[key];
  const cls = /^issue_(.+)$/.exec(key);
  return cls ? `Issue cycles, ${cls[1]}` : key;
}

/* A value with its unit as text. */
function fmtUnit(v, unit) {
  if (typeof v !== 'number') return String(v ?? '—');
  switch (unit) {
    case 's': return fmtSeconds(v);
    case '%': return fmtPercent(v);
    case 'B/s': case 'bytes/s': return fmtGBs(v);
    case 'B': case 'bytes': return `${fmtNum(v)} B`;
    case '': case undefined: return fmtNum(v);
    default: return `${fmtNum(v)} ${unit}`;
  }
}

/* ---- the form --------------------------------------------------------------------- */

function numberField(id, label, placeholder) {
  return el('div', { class: 'field' }, el('label', { for: id, text: label }),
    el('input', { id, type: 'number', step: 'any', min: '0', placeholder: placeholder || null }));
}

function predictForm(devices) {
  const names = deviceNames(devices);
  const source = (value, text) => el('label', { class: 'choice' },
    el('input', { type: 'radio', name: 'pr-source', value, checked: value === 'ptx' }), ` ${text}`);
  return el('form', { id: 'pr-form', class: 'predict-form', novalidate: true },
    el('div', { class: 'field wide' }, el('label', { for: 'pr-device', text: 'Device' }),
      el('select', { id: 'pr-device' }, devices.map((d) =>
        el('option', { value: d.uuid, text: `${names.get(d.uuid)} (${d.attached ? 'attached' : d.host || 'stored'})` }))),
      el('p', { class: 'hint', text: 'Its newest latency and memory results (and model validation, for the bandwidths) are the model\'s parameters.' })),
    el('fieldset', { class: 'wide' }, el('legend', { text: 'Kernel' }),
      el('div', { class: 'choices' }, source('ptx', 'PTX'), source('per_warp', 'Per-warp instruction counts')),
      el('div', { id: 'pr-ptx-fields', class: 'predict-grid' },
        el('div', { class: 'field wide' }, el('label', { for: 'pr-ptx-file', text: 'PTX file' }),
          el('input', { id: 'pr-ptx-file', type: 'file', accept: '.ptx,text/plain' })),
        el('div', { class: 'field wide' }, el('label', { for: 'pr-ptx', text: 'PTX (or paste it here)' }),
          el('textarea', { id: 'pr-ptx', rows: 8, spellcheck: 'false' })),
        el('div', { class: 'field' }, el('label', { for: 'pr-entry', text: 'Entry' }),
          el('input', { id: 'pr-entry', type: 'text', placeholder: 'the module\'s only .entry' })),
        el('div', { class: 'field' }, el('label', { for: 'pr-params', text: 'Kernel parameters (integers)' }),
          el('input', { id: 'pr-params', type: 'text', placeholder: 'n=8192, iters=4', spellcheck: 'false' }),
          el('p', { class: 'hint', text: 'What the loops\' trip counts need: name=value, each by its .param name or its index from 0 (3=8192); the server refuses one the entry does not have, or one given twice.' }))),
      el('fieldset', { id: 'pr-per-warp', class: 'predict-grid', hidden: true },
        el('legend', { text: 'Instructions one warp executes' }),
        PER_WARP_FIELDS.map(([k, label]) => numberField(`pr-per-warp-${k}`, label)),
        numberField('pr-uncoal-per-access', 'Transactions of an uncoalesced access', 'the warp size'),
        numberField('pr-coal-bytes', 'Bytes of a coalesced access', '128'))),
    el('fieldset', { class: 'wide predict-grid' }, el('legend', { text: 'Launch' }),
      el('div', { class: 'field' }, el('label', { for: 'pr-grid', text: 'Grid (blocks: x or x,y,z)' }),
        el('input', { id: 'pr-grid', type: 'text', inputmode: 'numeric', placeholder: '1024' })),
      el('div', { class: 'field' }, el('label', { for: 'pr-block', text: 'Block (threads: x or x,y,z)' }),
        el('input', { id: 'pr-block', type: 'text', inputmode: 'numeric', placeholder: '256' })),
      numberField('pr-regs', 'Registers per thread', '32')),
    el('details', { id: 'pr-more', class: 'wide' },
      el('summary', { text: 'More: shared memory, launches, transfers, cache hit rates' }),
      el('div', { class: 'predict-grid' }, MORE_FIELDS.map(([k, label, ph]) =>
        numberField(`pr-${k.replace(/[._]/g, '-')}`, label, ph)))),
    el('div', { class: 'actions wide' },
      el('button', { type: 'submit', text: 'Predict' }),
      el('div', { id: 'pr-error', class: 'result bad', role: 'alert', hidden: true })));
}

/* "1024" -> 1024, "32, 8" -> [32, 8]; anything else goes as typed, for the
 * server to refuse with its reason. */
function dimsValue(text) {
  const t = text.trim();
  if (!/^\d+(\s*[,x×]\s*\d+){0,2}$/.test(t)) return t === '' ? undefined : t;
  const d = t.split(/\s*[,x×]\s*/).map(Number);
  return d.length === 1 ? d[0] : d;
}

/* "n=8192, iters = 4" -> {n: 8192, iters: 4}; a value that is not a
 * number goes as typed, for the server to refuse. fromEntries: a name such
 * as "__proto__" stays a member, not the object's prototype. */
function paramsValue(text) {
  return Object.fromEntries(text.replace(/\s*=\s*/g, '=').split(/[\s,;]+/).filter(Boolean).map((pair) => {
    const [name, value = ''] = pair.split('=');
    return [name, value !== '' && Number.isFinite(Number(value)) ? Number(value) : value];
  }));
}

/* An input's number, or undefined when empty (the member is left out). */
function numberValue(id) {
  const v = $(id).value.trim();
  return v === '' ? undefined : Number(v);
}

function predictBody() {
  const kernel = { grid: dimsValue($('pr-grid').value), block: dimsValue($('pr-block').value), regs: numberValue('pr-regs') };
  if (document.querySelector('input[name="pr-source"]:checked').value === 'ptx') {
    kernel.ptx = $('pr-ptx').value;
    if ($('pr-entry').value.trim()) kernel.entry = $('pr-entry').value.trim();
    if ($('pr-params').value.trim()) kernel.params = paramsValue($('pr-params').value);
  } else {
    kernel.per_warp = {};
    for (const [k] of PER_WARP_FIELDS) kernel.per_warp[k] = numberValue(`pr-per-warp-${k}`);
    kernel.uncoal_per_access = numberValue('pr-uncoal-per-access');
    kernel.coal_bytes = numberValue('pr-coal-bytes');
  }
  for (const [k] of MORE_FIELDS) {
    const v = numberValue(`pr-${k.replace(/[._]/g, '-')}`);
    if (v === undefined) continue;
    const [outer, inner] = k.split('.');
    if (inner) kernel[outer] = { ...kernel[outer], [inner]: v };
    else kernel[k] = v;
  }
  // JSON.stringify leaves out the undefined members
  return { device: $('pr-device').value, kernel };
}

/* The input a problem's field names, by the form's naming of its ids
 * ("kernel.per_warp.fp32" -> #pr-per-warp-fp32, "device" -> #pr-device),
 * else the nearest enclosing one that has an input ("kernel.per_warp.x" ->
 * the per-warp fieldset); null for the kernel as a whole. */
function fieldInput(field) {
  for (let f = field; f; f = f.slice(0, Math.max(0, f.lastIndexOf('.')))) {
    const node = $(`pr-${f.replace(/^kernel\.?/, '').replace(/[._]/g, '-')}`);
    if (node && f !== 'kernel') return node;
  }
  return null;
}

function clearInvalid() {
  for (const node of document.querySelectorAll('#pr-form [aria-invalid]')) {
    node.removeAttribute('aria-invalid');
    node.removeAttribute('aria-describedby');
  }
}

/* ---- refusals ---------------------------------------------------------------------- */

/* A 409's way out: the probe its detail names, on the device's page and,
 * for a GPU attached here, submitted from this page. */
function missingActions(uuid, detail) {
  const kind = /"kind":"([\w-]+)"/.exec(detail || '')?.[1];
  if (!kind) return null;
  const view = VIEW_TITLES[kind] ? kind : 'latency';
  const link = el('a', { class: 'device-link', href: hashFor(['device', uuid, view]), text: `The device's ${VIEW_TITLES[view].toLowerCase()} page` });
  const device = findDevice(uuid);
  if (!device?.attached) {
    return el('p', {}, link, ` · this GPU is not attached here: run the ${kind} probe where it is and import its results.`);
  }
  const out = el('span', { class: 'hint' });
  const button = el('button', {
    type: 'button',
    class: 'subtle',
    text: `Submit the ${kind} probe`,
    onclick: async () => {
      button.disabled = true;
      try {
        const job = await apiPost('/api/v1/jobs', { kind, device: uuid }, authHeaders());
        out.replaceChildren(el('a', { href: `#/?job=${job.id}`, text: `Job ${job.id} submitted` }), '; predict again once it has succeeded.');
      } catch (e) {
        out.textContent = e.message; // e.g. 401 without the write token
        button.disabled = false;
      }
    },
  });
  return el('p', { class: 'predict-actions' }, link, ' ', button, ' ', out);
}

function showProblem(err, uuid) {
  const box = $('pr-error');
  const p = err.problem;
  box.hidden = false;
  clearInvalid();
  if (!p || typeof p !== 'object') {
    box.replaceChildren(err.message);
    return;
  }
  box.replaceChildren(
    el('strong', { text: `${p.title || 'Refused'} (${err.status}). ` }),
    el('span', { class: 'detail', text: p.detail || '' }),
    p.field ? el('p', { id: 'pr-error-field', class: 'field-name' }, 'Field: ', el('code', { text: p.field })) : null,
    err.status === 409 ? missingActions(uuid, p.detail) : null);
  const input = p.field ? fieldInput(p.field) : null;
  if (input) {
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', 'pr-error');
    if (input.closest('details')) input.closest('details').open = true;
    input.focus();
  }
}

/* ---- the answer --------------------------------------------------------------------- */

/* One table of the breakdown: a row per member, its value (the raw number
 * in data-value, for a reader or a test to compare with the API's). */
function breakdownTable(caption, rows, prediction) {
  const table = dataTable([
    { head: 'Quantity', value: ([k, meaning]) => el('span', {}, meaning, el('span', { class: 'key mono', text: k })) },
    { head: 'Value', cls: 'num', value: ([k, , unit]) => fmtUnit(prediction[k], unit), title: ([k]) => String(prediction[k]) },
  ], rows, caption);
  [...table.tBodies[0].rows].forEach((tr, i) => {
    const [k, , unit] = rows[i];
    Object.assign(tr.dataset, { key: k, value: String(prediction[k]), unit: unit === 'text' ? 'text' : unit });
  });
  return table;
}

function breakdown(prediction) {
  const known = new Set(PREDICTION_GROUPS.flatMap(([, rows]) => rows.map(([k]) => k)));
  const groups = PREDICTION_GROUPS.map(([caption, rows]) => [caption, rows.filter(([k]) => k in prediction)]);
  // a member this page does not name yet is still shown, under its own name
  const other = Object.keys(prediction).filter((k) => !known.has(k)).map((k) => [k, k, typeof prediction[k] === 'number' ? '' : 'text']);
  if (other.length) groups.push(['Other', other]);
  return el('div', { id: 'pr-breakdown', class: 'predict-tables' },
    groups.filter(([, rows]) => rows.length).map(([caption, rows]) => breakdownTable(caption, rows, prediction)));
}

function parametersTable(parameters) {
  const rows = Object.entries(parameters);
  const table = dataTable([
    { head: 'Parameter', value: ([k]) => el('span', {}, paramName(k), el('span', { class: 'key mono', text: k })) },
    { head: 'Value', cls: 'num', value: ([, p]) => fmtUnit(p.value, p.unit ?? '') },
    {
      head: 'Measured by',
      cls: 'source',
      value: ([, p]) => el('span', {},
        typeof p.job_id === 'number' ? el('a', { href: `#/?job=${p.job_id}`, text: `job ${p.job_id}` }) : null,
        typeof p.job_id === 'number' ? ': ' : '', p.source || ''),
    },
  ], rows, 'The device\'s parameters, each with the job that measured it');
  table.id = 'pr-parameters';
  [...table.tBodies[0].rows].forEach((tr, i) => { tr.dataset.name = rows[i][0]; });
  return table;
}

/* The per-warp counts the model used: derived from the PTX (with its
 * loops and notes) or as given. */
function countsSection(kernel) {
  const desc = kernel.description || kernel;
  const counts = Object.entries(desc.per_warp || {});
  const table = dataTable([
    { head: 'Instructions of a warp', value: ([k]) => PER_WARP_FIELDS.find(([f]) => f === k)?.[1] || k },
    { head: 'Count', cls: 'num', value: ([, v]) => fmtCount(v) },
  ], counts, kernel.description ? 'Derived from the PTX and the launch' : 'As given');
  table.id = 'pr-counts';
  [...table.tBodies[0].rows].forEach((tr, i) => { tr.dataset.count = counts[i][0]; });
  const notes = Array.isArray(desc.notes) ? desc.notes : [];
  return el('div', {}, table,
    kernel.description ? kvList([
      ['Loops', fmtCount(desc.loops)],
      ['Transactions of an uncoalesced access', fmtNum(desc.uncoal_per_access)],
      ['Bytes of a coalesced access', fmtNum(desc.coal_bytes)],
    ]) : null,
    notes.length ? el('ul', { class: 'hint' }, notes.map((n) => el('li', { text: typeof n === 'string' ? n : JSON.stringify(n) }))) : null);
}

/* A repetition's candidates: the case's formula and the three throughput
 * floors (0 where a bandwidth is unknown); the largest sets the time. */
function repetitionChart(canvas, p) {
  const labels = [`Case ${p.case}'s formula`, 'Departure floor', 'Device-memory floor', 'L2 floor'];
  const data = [p.case_cycles_per_rep, p.floor_departure, p.floor_dram, p.floor_l2];
  makeChart(canvas, {
    type: 'bar',
    data: { labels, datasets: [{ label: 'cycles of a repetition', data, ...barStyle(seriesStyle(0)) }] },
    options: {
      indexAxis: 'y', // the labels read across a narrow screen
      scales: { x: { beginAtZero: true, title: axisTitle('cycles per repetition') } },
      plugins: {
        legend: { display: false },
        title: { display: true, text: `A repetition takes the largest: ${fmtNum(p.exec_cycles_per_rep)} cycles (bound by ${BOUND_TEXT[p.bound] || p.bound})` },
        tooltip: { callbacks: { label: (c) => `${fmtNum(c.parsed.x)} cycles` } },
      },
    },
  });
}

function showAnswer(r) {
  const p = r.prediction || {};
  const o = r.occupancy || {};
  const launches = r.kernel?.launches ?? 1;
  const chart = chartBox('A repetition\'s formula and throughput floors, in cycles', 'short');
  const headline = el('p', { class: 'predict-headline' }, 'Predicted ',
    el('span', { id: 'pr-total', class: 'big', 'data-seconds': String(p.total_s), title: `${p.total_s} s`, text: fmtSeconds(p.total_s) }),
    ` on ${r.device?.name || deviceLabel(r.device?.uuid)}`,
    launches !== 1 || p.transfer_s ? ` (${fmtNum(launches)} launch${launches === 1 ? '' : 'es'} of ${fmtSeconds(p.kernel_s)}, transfers ${fmtSeconds(p.transfer_s)})` : '',
    ' · bound by ', el('strong', { text: BOUND_TEXT[p.bound] || String(p.bound) }),
    ` · case ${p.case_meaning || p.case}`);
  const occupancy = kvList([
    ['Blocks per SM', o.blocks_per_sm],
    ['Active warps per SM', `${o.active_warps ?? '—'} of ${o.warps?.max_per_sm ?? '—'} (${fmtPercent(o.occupancy)})`],
    ['Limited by', (o.limiter || '—').replace(/_/g, ' ')],
    ['Device', el('span', {}, r.device?.name || '—', ' ', el('a', { href: hashFor(['device', r.device?.uuid || '', 'latency']), class: 'mono', text: shortUuid(r.device?.uuid) }))],
  ]);
  const out = $('pr-result');
  out.replaceChildren(
    el('h2', { text: 'Prediction' }), headline, occupancy, chart.box,
    el('h3', { text: 'Every value of the model' }), breakdown(p),
    el('h3', { text: 'Parameters' }), el('div', { class: 'scroll' }, parametersTable(r.parameters || {})),
    el('h3', { text: 'The kernel as used' }), countsSection(r.kernel || {}));
  out.hidden = false;
  repetitionChart(chart.canvas, p);
}

/* ---- the page ------------------------------------------------------------------------ */

async function predictRun(ctx) {
  pred.run += 1;
  const run = pred.run;
  const body = predictBody();
  let r;
  try {
    r = await apiPost('/api/v1/model/predict', body);
  } catch (e) {
    if (run !== pred.run || !ctx.alive()) return;
    destroyCharts();
    $('pr-result').hidden = true; // an older answer is not this request's
    showProblem(e, body.device);
    if (e.status === 0) setStatus(e.message, true);
    else markUpdated(); // the daemon answered: it refused the request
    return;
  }
  if (run !== pred.run || !ctx.alive()) return;
  markUpdated();
  $('pr-error').hidden = true;
  clearInvalid();
  destroyCharts();
  showAnswer(r);
}

function showSource() {
  const ptx = document.querySelector('input[name="pr-source"]:checked').value === 'ptx';
  $('pr-ptx-fields').hidden = !ptx;
  $('pr-per-warp').hidden = ptx;
}

async function renderPredict(main, route, ctx) {
  await loadInventory(5000);
  if (!ctx.alive()) return;
  const devices = inventoryDevices();
  const asked = route.query.get('device');
  // a device the address names but the list lacks: asked for anyway, so
  // that the server says what it knows of it
  if (asked && !devices.some((d) => d.uuid === asked)) devices.push({ uuid: asked, name: shortUuid(asked), host: 'unknown' });
  const intro = el('p', { class: 'hint' }, 'A kernel\'s time by the MWP/CWP model (docs/model.md) with the device\'s measured parameters: ',
    el('code', { text: 'POST /api/v1/model/predict' }), '. Nothing runs on the GPU, and no token is needed.');
  const section = el('section', { 'aria-labelledby': 'pr-title', class: 'predict' },
    el('h2', { id: 'pr-title', text: 'Predict a kernel\'s time' }), intro);
  const result = el('section', { id: 'pr-result', class: 'predict', hidden: true }); // #view announces it
  main.replaceChildren(section, result);
  if (!devices.length) {
    section.append(el('p', { class: 'empty', text: 'No device is known here: attach a GPU and run the latency and memory probes, or import results.' }));
    markUpdated();
    return;
  }
  section.append(predictForm(devices));
  const select = $('pr-device');
  if (asked) select.value = asked;
  const keepDevice = () => window.history.replaceState(null, '', hashFor(['predict'], new URLSearchParams({ device: select.value })));
  select.addEventListener('change', keepDevice);
  for (const radio of document.querySelectorAll('input[name="pr-source"]')) radio.addEventListener('change', showSource);
  $('pr-ptx-file').addEventListener('change', async (ev) => {
    const file = ev.target.files[0];
    if (file) $('pr-ptx').value = await file.text();
  });
  $('pr-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    keepDevice();
    predictRun(ctx).then(() => { if (ctx.alive()) markReady('predict'); });
  });
  markUpdated();
}
