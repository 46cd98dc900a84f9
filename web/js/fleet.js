/*
 * The fleet (#/fleet[?model=M&host=H]): every GPU whose figures this store
 * holds, compared with the GPUs of its model by the rule GET /api/v1/fleet
 * states (docs/fleet.md). The rule in words and numbers; per model its
 * GPUs, hosts, drivers (flagged when its GPUs run more than one known
 * driver: unknown is none of its own) and
 * outliers, and its figures' distributions, each linking to its chart
 * (fleet_distribution.js); the devices with their drivers and outlier
 * counts; each node's GPUs side by side in PCI bus order, with their NUMA
 * nodes (the device records of GET /api/v1/devices, which a pushed bundle
 * carries), the shipped reference data apart.
 * The model and host filters are the API's own (?model=, ?host=: the
 * distributions stay the whole model's), and every number is the API's:
 * the page computes no statistics.
 */

/* Which result view of the device page shows a figure's probe. */
const FAMILY_VIEWS = [
  [/^gpuprobe_instruction_/, 'latency'],
  [/^gpuprobe_(memory|shared_memory|device_memory|departure)_/, 'memory'],
  [/^gpuprobe_register_bank/, 'banks'],
  [/^gpuprobe_min_safe_stall$/, 'control-codes'],
  [/^gpuprobe_dual_issue_/, 'dual-issue'],
  [/^gpuprobe_(validation_kernel|dram_bandwidth|host_link_bandwidth)_/, 'model-validation'],
];

/* A figure's value as text, by the API's unit. */
const UNIT_FORMATS = {
  cycles: (v) => `${fmtNum(v)} cycles`,
  mhz: (v) => `${fmtNum(v)} MHz`,
  bytes: fmtBytes,
  bytes_per_second: fmtGBs,
  seconds: fmtSeconds,
  per_sm_clock: (v) => `${fmtNum(v)} /SM/clk`,
};

function fmtFleetValue(v, unit) {
  if (typeof v !== 'number') return '—';
  return UNIT_FORMATS[unit] ? UNIT_FORMATS[unit](v) : fmtNum(v);
}

/* "#/device/UUID/memory?job=5": the result that gave a GPU's figure (the
 * clock's probe label names its view). */
function figureResultHash(uuid, metric, jobId) {
  const probe = /probe="([^"]+)"/.exec(metric);
  const family = metric.split('{')[0];
  const view = probe && RESULT_RENDERERS[probe[1]] ? probe[1]
    : (FAMILY_VIEWS.find(([re]) => re.test(family)) || [null, 'latency'])[1];
  return hashFor(['device', uuid, view], jobId ? new URLSearchParams({ job: jobId }) : null);
}

/* The query of the given non-empty arguments: "?model=...&host=..." or "". */
function fleetQuery(args) {
  const q = new URLSearchParams(Object.entries(args).filter(([, v]) => v));
  return [...q.keys()].length ? q : null;
}

function fleetHash(model, host) {
  return hashFor(['fleet'], fleetQuery({ model, host }));
}

function distributionHash(model, metric, device) {
  return hashFor(['fleet', 'distribution'], fleetQuery({ model, metric, device }));
}

function fleetApi(path, args) {
  const q = fleetQuery(args);
  return api(q ? `${path}?${q}` : path);
}

function jobLink(jobId) {
  return jobId ? el('a', { href: `#/?job=${jobId}`, text: `job ${jobId}` }) : '—';
}

/* A GPU's driver (its newest result's; null when none of its results names
 * one: figures alone from a node older than the field). */
function driverText(v) {
  return v ?? 'unknown';
}

/* A model's drivers, most first, each with its GPU count, and those of them
 * known: a GPU of unknown driver (null: figures alone from a node older than
 * the field) runs some driver, not a second one, so only known drivers make
 * a split. */
function modelDriverList(m) {
  const drivers = Array.isArray(m.drivers) ? m.drivers : [];
  return { drivers, known: drivers.filter((x) => x.driver_version !== null && x.driver_version !== undefined) };
}

/* A model's drivers as text; drawn in the warning colour when its GPUs run
 * more than one known driver: a driver change can move figures
 * (docs/fleet.md), so its outliers may be the driver's doing. */
function modelDrivers(m) {
  const { drivers, known } = modelDriverList(m);
  const text = drivers.map((x) => `${driverText(x.driver_version)} × ${x.devices}`).join(', ') || '—';
  if (known.length > 1) {
    return el('span', { class: 'warn', title: `${known.length} drivers among this model's GPUs: a driver change can move figures`, text });
  }
  return known.length < drivers.length
    ? el('span', { title: 'unknown: GPUs whose results name no driver (from a node older than the field), not a second driver', text })
    : text;
}

/* The warning of a model whose GPUs run different known drivers, or null;
 * GPUs of unknown driver are listed after them, apart. */
function driverSplit(m) {
  const { drivers, known } = modelDriverList(m);
  if (known.length < 2) return null;
  const each = known.map((x) => `${x.driver_version} on ${plural(x.devices, 'GPU')}`).join(', ');
  const unknown = drivers.filter((x) => !known.includes(x)).reduce((n, x) => n + x.devices, 0);
  return el('p', { class: 'warn driver-split' },
    `Its GPUs run ${known.length} drivers: ${each}${unknown ? ` (and unknown on ${plural(unknown, 'GPU')}: results that name no driver)` : ''}. A driver change can move figures (a new JIT, another clock policy): an outlier on a driver its peers do not run may be the driver's doing. Each GPU's driver is in the devices table below.`);
}

/* A count drawn in the warning colour when it is not 0. */
function outlierCount(n) {
  return el('span', { class: n > 0 ? 'warn' : null, text: String(n ?? '—') });
}

/* ---- the rule and the filters ---------------------------------------------- */

function ruleBlock(rule) {
  return el('div', { id: 'fleet-rule', class: 'fleet-rule' },
    el('p', {}, el('strong', { text: 'The rule: ' }), rule.text || '—', '.'),
    kvList([
      ['k', `${fmtNum(rule.k)} robust sigmas`],
      ['mad_scale', `${fmtNum(rule.mad_scale, 5)} (× MAD estimates a sigma)`],
      ['min_relative', `${fmtPercent(rule.min_relative, 0)} of the median`],
      ['min_devices', `${rule.min_devices} GPUs`],
    ]));
}

/* The models and hosts of the whole fleet, whatever is filtered. */
function fleetFilter(all, model, host) {
  const models = all.models.map((m) => m.model);
  const hosts = [...new Set(all.devices.filter((d) => !model || d.model === model).map((d) => d.host))].sort();
  const option = (value, text) => el('option', { value, text });
  const modelSelect = el('select', { id: 'fleet-model' }, option('', 'every model'),
    models.map((m) => option(m, m)), model && !models.includes(model) ? option(model, model) : null);
  const hostSelect = el('select', { id: 'fleet-host' }, option('', 'every host'),
    hosts.map((h) => option(h, h)), host && !hosts.includes(host) ? option(host, host) : null);
  modelSelect.value = model;
  hostSelect.value = host;
  const go = () => { window.location.hash = fleetHash(modelSelect.value, hostSelect.value); };
  modelSelect.addEventListener('change', go);
  hostSelect.addEventListener('change', go);
  return el('form', { id: 'fleet-filter', class: 'inline-form', onsubmit: (e) => e.preventDefault() },
    el('label', { for: 'fleet-model', text: 'Model' }), modelSelect,
    el('label', { for: 'fleet-host', text: 'Host' }), hostSelect,
    model || host ? el('a', { href: '#/fleet', text: 'Show everything' }) : null);
}

/* What to do while no model has enough GPUs to compare. */
function fleetEmpty(all) {
  const min = all.rule.min_devices;
  if (all.models.some((m) => m.devices >= min)) return null;
  const what = all.models.length
    ? `No model has ${min} GPUs here yet (${all.models.map((m) => `${m.model}: ${m.devices}`).join(', ')}), so no GPU is compared with its peers.`
    : 'No GPU has fleet figures here yet.';
  return el('div', { id: 'fleet-empty', class: 'empty' },
    el('p', { text: what }),
    el('p', {}, 'Every result this daemon stores adds its GPU: a job run on a GPU of this host, ',
      el('code', { text: 'gpuprobe probe --db' }), ', or the results of another node pushed here. On that node: ',
      el('code', { text: 'gpuprobe export --db var/gpuprobe.db -o node.json' }), ', then ',
      el('code', { text: `curl -H "Authorization: Bearer TOKEN" --data-binary @node.json ${window.location.origin}/api/v1/import` }),
      ' (or “Import a result bundle” on the ', el('a', { href: '#/', text: 'overview' }), '). ',
      'Which figures are compared, the rule and why: ', el('code', { text: 'docs/fleet.md' }), ' in gpuprobe\'s source.'));
}

/* ---- tables ------------------------------------------------------------------ */

/* How many of a model's GPUs are the shipped reference data's, by model
 * (devices: the whole fleet's, GET /api/v1/fleet's devices). */
function referenceGpus(devices) {
  const n = new Map();
  for (const d of devices) if (d.host === REFERENCE_HOST) n.set(d.model, (n.get(d.model) || 0) + 1);
  return n;
}

/* A model's hosts, the reference data's not counted: it is no node (the
 * API counts its host "reference" as one). */
function modelHosts(m, refs) {
  return m.hosts - (refs.get(m.model) ? 1 : 0);
}

/* "12 GPUs: 11 on 8 hosts, 1 of the reference data", "1 GPU of the
 * reference data", "11 GPUs on 8 hosts". */
function modelPlaces(m, refs) {
  const ref = refs.get(m.model) || 0;
  const hosts = modelHosts(m, refs);
  if (!ref) return `${plural(m.devices, 'GPU')} on ${plural(hosts, 'host')}`;
  if (ref >= m.devices) return `${plural(m.devices, 'GPU')} of the reference data`;
  return `${plural(m.devices, 'GPU')}: ${fmtCount(m.devices - ref)} on ${plural(hosts, 'host')}, ${fmtCount(ref)} of the reference data`;
}

function modelsTable(models, host, refs) {
  const table = dataTable([
    { head: 'Model', value: (m) => el('a', { href: fleetHash(m.model, host), text: m.model }) },
    { head: 'CC', value: (m) => m.compute_capability },
    { head: 'GPUs', cls: 'num', value: (m) => m.devices },
    {
      head: 'Hosts', cls: 'num', value: (m) => modelHosts(m, refs),
      title: (m) => (refs.get(m.model) ? `and ${plural(refs.get(m.model), 'GPU')} of the reference data, no host` : null),
    },
    { head: 'GPUs with outliers', cls: 'num', value: (m) => outlierCount(m.devices_with_outliers) },
    { head: host ? `Outliers on ${host}` : 'Outliers', cls: 'num', value: (m) => outlierCount(m.outliers.length) },
    { head: 'Figures', cls: 'num', value: (m) => m.figures.length },
    { head: 'Drivers (GPUs)', value: modelDrivers },
  ], models, 'Models: each GPU is compared with the GPUs of its model only');
  table.id = 'fleet-models';
  return table;
}

function outliersTable(m, units) {
  const unit = (o) => units.get(o.metric);
  const categorical = (o) => typeof o.text === 'string';
  return sortableTable([
    { head: 'Device', key: (o) => o.uuid, cell: (o) => el('a', { class: 'mono', href: figureResultHash(o.uuid, o.metric, o.job_id), text: o.uuid, title: 'the result that gave this figure' }) },
    { head: 'Host', key: (o) => o.host, cell: (o) => o.host },
    { head: 'Driver', key: (o) => driverText(o.driver_version), cell: (o) => driverText(o.driver_version) },
    { head: 'Figure', key: (o) => o.metric, cell: (o) => el('a', { class: 'mono', href: distributionHash(m.model, o.metric, o.uuid), text: o.metric, title: 'its distribution over the model, this GPU marked' }) },
    { head: 'Value', cls: 'num', key: (o) => (categorical(o) ? o.text : o.value), cell: (o) => el('span', { class: 'warn', text: categorical(o) ? o.text : fmtFleetValue(o.value, unit(o)) }) },
    { head: 'Median or norm', cls: 'num', key: (o) => (categorical(o) ? o.mode : o.median), cell: (o) => (categorical(o) ? o.mode : fmtFleetValue(o.median, unit(o))) },
    {
      head: 'Robust σ', cls: 'num', abbr: '|value − median| in robust sigmas (1.4826 × MAD)',
      key: (o) => (typeof o.deviation_mads === 'number' ? Math.abs(o.deviation_mads) : null),
      cell: (o) => (typeof o.deviation_mads === 'number' ? fmtNum(o.deviation_mads, 3) : '—'),
      title: (o) => (o.deviation_mads === null ? 'the peers agree exactly (MAD 0): the relative difference decides' : null),
    },
    {
      head: 'Relative', cls: 'num', abbr: '(value − median) / |median|',
      key: (o) => (typeof o.relative === 'number' ? Math.abs(o.relative) : null),
      cell: (o) => (typeof o.relative === 'number' ? `${o.relative > 0 ? '+' : ''}${fmtPercent(o.relative)}` : '—'),
    },
    { head: 'Job', key: (o) => o.job_id, cell: (o) => jobLink(o.job_id) },
  ], m.outliers.map((o) => ({ ...o, name: o.uuid })), `Outliers of ${m.model}`, null);
}

function figuresTable(m) {
  const num = (f, k) => (f.categorical ? null : f[k]);
  const figure = (head, k) => ({ head, cls: 'num', key: (f) => num(f, k), cell: (f) => (f.categorical ? '—' : fmtFleetValue(f[k], f.unit)) });
  return sortableTable([
    { head: 'Figure', key: (f) => f.metric, cell: (f) => el('a', { class: 'mono', href: distributionHash(m.model, f.metric, ''), text: f.metric }) },
    { head: 'n', cls: 'num', key: (f) => f.n, cell: (f) => f.n },
    {
      head: 'Median or norm', cls: 'num', key: (f) => (f.categorical ? f.mode : f.median),
      cell: (f) => (f.categorical ? f.mode : fmtFleetValue(f.median, f.unit)),
      title: (f) => (f.categorical ? `${f.mode_devices} of ${f.n} GPUs hold it` : null),
    },
    figure('MAD', 'mad'),
    figure('Min', 'min'),
    figure('Max', 'max'),
    { head: 'Outliers', cls: 'num', key: (f) => f.outliers, cell: (f) => outlierCount(f.outliers) },
  ], m.figures.map((f) => ({ ...f, name: f.metric })), `Figures of ${m.model}: press a head to sort, a figure for its distribution`, null);
}

function devicesTable(devices) {
  return sortableTable([
    { head: 'Device', key: (d) => d.uuid, cell: (d) => el('a', { class: 'mono', href: hashFor(['device', d.uuid, 'latency']), text: d.uuid }) },
    { head: 'Host', key: (d) => d.host, cell: (d) => d.host },
    { head: 'Model', key: (d) => d.model, cell: (d) => d.model },
    { head: 'Driver', key: (d) => driverText(d.driver_version), cell: (d) => driverText(d.driver_version) },
    { head: 'Figures', cls: 'num', key: (d) => d.figures, cell: (d) => d.figures },
    { head: 'Outliers', cls: 'num', key: (d) => d.outliers, cell: (d) => outlierCount(d.outliers) },
  ], devices.map((d) => ({ ...d, name: d.uuid })), 'Devices and the figures on which each is an outlier', 'fleet-devices');
}

/* The host the shipped reference data comes in under (docs/reference-data.md),
 * the API's only mark of it: GPUs measured on different machines, not a
 * node, whose records each carry their own machine's slot (the same bus id
 * twice would read as two GPUs in one slot). */
const REFERENCE_HOST = 'reference';

/* One row per host, its GPUs side by side in PCI bus id order, each with
 * its NUMA node and drawn in the warning colour when it is an outlier
 * somewhere; the reference data in a table of its own after it (null when
 * there are no nodes, or no reference data), its GPUs by model, with no
 * slot or NUMA node. records: uuid -> the device record (GET /api/v1/devices). */
function nodesTables(devices, records) {
  const hosts = new Map();
  for (const d of devices) {
    const r = records.get(d.uuid) || {};
    if (!hosts.has(d.host)) hosts.set(d.host, []);
    hosts.get(d.host).push({ ...d, bus: r.pci_bus_id || '', numa: r.numa_node });
  }
  const outliers = (g) => `${g.outliers} outlier figure${g.outliers === 1 ? '' : 's'}`;
  const row = (host) => {
    const ref = host === REFERENCE_HOST;
    const gpus = hosts.get(host).sort((a, b) => (ref ? a.model.localeCompare(b.model) : a.bus.localeCompare(b.bus)) || a.uuid.localeCompare(b.uuid));
    return el('tr', { 'data-host': host, class: ref ? 'reference' : null },
      el('th', { scope: 'row', text: ref ? 'reference data' : host, title: ref ? 'gpuprobe\'s shipped results (host "reference"): measured on different machines, not a node' : null }),
      el('td', { class: 'num', text: String(gpus.length) }),
      el('td', { class: 'links' }, gpus.map((g) => el('a', {
        href: hashFor(['device', g.uuid, 'latency']),
        class: `${ref ? '' : 'mono'}${g.outliers > 0 ? ' warn' : ''}`.trim() || null,
        'data-uuid': g.uuid,
        title: ref ? `${g.uuid} · ${g.model} · driver ${driverText(g.driver_version)} · reference data, measured on a machine of its own · ${outliers(g)}`
          : `${g.uuid} · ${g.model} · driver ${driverText(g.driver_version)} · ${outliers(g)}`,
        text: ref ? g.model : `${g.bus || '—'} (${fmtNumaNode(g.numa)})`,
      }))));
  };
  const table = (id, caption, heads, rows) => el('table', { id, class: 'data' },
    el('caption', { class: 'visually-hidden', text: caption }),
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, rows));
  const nodes = [...hosts.keys()].filter((h) => h !== REFERENCE_HOST).sort();
  return {
    nodes: nodes.length ? table('fleet-nodes', "Each node's GPUs by PCI bus id, with their NUMA nodes",
      ['Host', 'GPUs', 'PCI bus id (NUMA node), in slot order'], nodes.map(row)) : null,
    reference: hosts.has(REFERENCE_HOST) ? table('fleet-reference', 'The reference data\'s GPUs, by model',
      ['Host', 'GPUs', 'Model (each GPU measured on a machine of its own)'], [row(REFERENCE_HOST)]) : null,
  };
}

/* ---- the view ---------------------------------------------------------------- */

/* The model's outliers; too few GPUs for the rule, only that: with no peers
 * to compare, "every GPU agrees with its peers" would claim what was not checked. */
function modelOutliers(m, rule, host, units) {
  if (m.outliers.length) return el('div', { class: 'scroll' }, outliersTable(m, units));
  if (m.devices < rule.min_devices) {
    return el('p', { class: 'empty', text: `Only ${m.devices} GPU${m.devices === 1 ? '' : 's'} of this model: a GPU is compared with its peers from ${rule.min_devices} on, so none is an outlier yet.` });
  }
  return el('p', { class: 'hint', text: host ? `No outlier on host ${host}.` : 'No outlier: every GPU agrees with its peers on every figure.' });
}

function modelSection(m, rule, host, openFigures, refs) {
  const units = new Map(m.figures.map((f) => [f.metric, f.unit]));
  return el('section', { class: 'fleet-model', 'data-model': m.model },
    el('h2', { text: m.model }),
    el('p', { class: 'hint', text: `compute capability ${m.compute_capability} · ${modelPlaces(m, refs)} · ${m.devices_with_outliers} with outliers` +
      `${host ? ` (the whole model's; the outliers listed are host ${host}'s)` : ''}` }),
    driverSplit(m),
    modelOutliers(m, rule, host, units),
    el('details', { class: 'runs', open: openFigures }, el('summary', { text: `Figures (${m.figures.length})` }),
      el('div', { class: 'scroll' }, figuresTable(m))));
}

async function renderFleet(main, route, ctx) {
  if (route.parts[1] === 'distribution') {
    await renderFleetDistribution(main, route, ctx);
    return;
  }
  const model = route.query.get('model') || '';
  const host = route.query.get('host') || '';
  const [all, filtered, inventory] = await Promise.all([
    api('/api/v1/fleet'),
    model || host ? fleetApi('/api/v1/fleet', { model, host }) : null,
    api('/api/v1/devices'),
  ]);
  if (!ctx.alive()) return;
  const shown = filtered || all;
  const head = el('section', { class: 'fleet-head' },
    el('h2', { text: 'Fleet' }),
    el('p', { class: 'hint', text: 'Every GPU whose results this daemon stores, compared with the other GPUs of its model: a GPU that differs from its peers is an outlier on that figure.' }),
    ruleBlock(all.rule), fleetFilter(all, model, host), fleetEmpty(all));
  const sections = [head];
  const refs = referenceGpus(all.devices);
  if (shown.models.length) {
    sections.push(el('section', {}, el('div', { class: 'scroll' }, modelsTable(shown.models, host, refs))));
    const open = shown.models.length === 1;
    for (const m of shown.models) sections.push(modelSection(m, all.rule, host, open, refs));
  } else if (model) {
    sections.push(el('p', { class: 'empty', text: `No GPU of model “${model}” has fleet figures here.` }));
  }
  if (shown.devices.length) {
    const records = new Map((inventory.devices || []).map((d) => [d.uuid, d]));
    const hosts = new Set(shown.devices.map((d) => d.host));
    const ref = hosts.delete(REFERENCE_HOST);
    const tables = nodesTables(shown.devices, records);
    // no node shown: none at all yet, or a filter that keeps only the reference data
    const heading = hosts.size ? `Nodes (${hosts.size})${ref ? ' and the reference data' : ''}`
      : all.devices.some((d) => d.host !== REFERENCE_HOST) ? 'The reference data' : 'No nodes yet; the reference data';
    sections.push(el('section', {}, el('h2', { text: heading }),
      tables.nodes ? el('div', { class: 'scroll' }, tables.nodes) : null,
      tables.reference ? el('div', { class: 'scroll' }, tables.reference) : null,
      ref ? el('p', { id: 'fleet-nodes-reference', class: 'hint' }, '“reference data” is gpuprobe\'s shipped results (host “reference”, ',
        el('code', { text: 'docs/reference-data.md' }), '): GPUs measured on different machines, not one node, so they have no slot order or NUMA node here. ',
        'A central daemon that compares a fleet leaves them out (', el('code', { text: 'reference = off' }), ', ', el('code', { text: 'docs/fleet.md' }), ').') : null));
  }
  if (all.devices.length) {
    sections.push(el('section', {}, el('h2', { text: `Devices (${shown.devices.length})` }),
      shown.devices.length ? el('div', { class: 'scroll' }, devicesTable(shown.devices))
        : el('p', { class: 'empty', text: `No GPU${model ? ` of ${model}` : ''}${host ? ` on host ${host}` : ''} has fleet figures here.` })));
  }
  main.replaceChildren(...sections);
  markUpdated();
}
