/*
 * A device's page (#/device/UUID/VIEW[?job=ID]): the device's attributes,
 * one tab per probe result (VIEW is the result's path under
 * /api/v1/devices/UUID/), the run's provenance with its history (older runs
 * by ?job=), a link to the kernel-time predictor with this device chosen,
 * and the export of the device's results as a bundle. The
 * result itself is drawn by the view's renderer (results_*.js).
 */

const VIEW_TITLES = {
  latency: 'Instructions',
  memory: 'Memory',
  banks: 'Register banks',
  'control-codes': 'Control codes',
  'dual-issue': 'Dual issue',
  'model-validation': 'Model validation',
};

/* VIEW -> function(container, doc) drawing that result. */
const RESULT_RENDERERS = {
  latency: renderLatency,
  memory: renderMemory,
  banks: renderBanks,
  'control-codes': renderControlCodes,
  'dual-issue': renderDualIssue,
  'model-validation': renderValidation,
};

function deviceFacts(d) {
  return kvList([
    ['Compute capability', d.compute_capability],
    ['SMs', fmtCount(d.sm_count)],
    ['SM / memory clock', `${fmtKhz(d.clock_khz)} / ${fmtKhz(d.memory_clock_khz)}`],
    ['Memory', `${fmtBytes(d.memory_bytes)}, ${d.memory_bus_width_bits ?? '—'} bit`],
    ['L2', fmtBytes(d.l2_bytes)],
    ['Registers / SM', fmtCount(d.registers_per_sm)],
    ['Shared memory / SM', fmtBytes(d.shared_memory_per_sm)],
    ['Host', d.attached ? `${d.host || 'this host'} (attached, index ${d.index})` : `${d.host || '—'} (stored results)`],
    ['PCI bus id · NUMA', `${d.pci_bus_id || '—'} · ${fmtNumaNode(d.numa_node)}`],
    ['UUID', el('span', { class: 'mono', text: d.uuid })],
  ], 'kv facts-grid');
}

/* "Job 3 · measured ... · driver ... · SM clock ... · 5 repeats" and, when
 * the device has more than one run, a picker of the others. */
function provenance(doc, uuid, view) {
  // read before and after the run: "1991–1980" would read as a range
  const clock = doc.clock_mhz && typeof doc.clock_mhz.before === 'number'
    ? `${Math.round(doc.clock_mhz.before)} MHz before, ${typeof doc.clock_mhz.after === 'number' ? `${Math.round(doc.clock_mhz.after)} MHz after` : 'not read after'}` : '—';
  const bits = [
    el('a', { href: `#/?job=${doc.job_id}`, text: `job ${doc.job_id}` }),
    ` · measured ${fmtTime(doc.measured_at)} · driver ${doc.driver_version || '—'} · SM clock ${clock}` +
      ` · ${doc.repeats ?? '—'} repeats · ${fmtDuration(doc.wall_s)} of GPU time`,
  ];
  const history = Array.isArray(doc.history) ? doc.history : [];
  let picker = null;
  if (history.length > 1) {
    const select = el('select', { id: 'history', 'aria-label': 'Run' }, history.map((h) =>
      el('option', { value: h.job_id, text: `job ${h.job_id}, ${fmtTime(h.measured_at)}${typeof h.gmae === 'number' ? `, error ${fmtPercent(h.gmae)}` : ''}` })));
    select.value = String(doc.job_id);
    select.addEventListener('change', () => {
      const q = new URLSearchParams({ job: select.value });
      window.location.hash = hashFor(['device', uuid, view], q);
    });
    picker = el('label', { class: 'history' }, 'Run ', select);
  }
  return el('p', { class: 'provenance' }, bits, picker);
}

function deviceTabs(uuid, view, query) {
  const keep = query.get('job') ? null : query;
  return el('nav', { class: 'tabs', 'aria-label': 'Results' },
    Object.entries(VIEW_TITLES).map(([v, title]) => el('a', {
      href: hashFor(['device', uuid, v], v === view ? keep : null),
      class: v === view ? 'tab current' : 'tab',
      'aria-current': v === view ? 'page' : null,
      'data-view': v,
      text: title,
    })));
}

function deviceSwitcher(uuid, view) {
  const devices = inventoryDevices();
  if (devices.length < 2) return null;
  const names = deviceNames(devices);
  const select = el('select', { id: 'device-switch', 'aria-label': 'Device' }, devices.map((d) =>
    el('option', { value: d.uuid, text: `${names.get(d.uuid)}${d.attached ? '' : ` (${d.host || 'stored'})`}` })));
  select.value = uuid;
  select.addEventListener('change', () => { window.location.hash = hashFor(['device', select.value, view]); });
  return select;
}

/* The result, or null with the problem shown in place (404 says which job
 * to run). */
async function fetchResult(uuid, view, job) {
  const q = job ? `?job=${encodeURIComponent(job)}` : '';
  return api(`/api/v1/devices/${encodeURIComponent(uuid)}/${view}${q}`);
}

function missingResult(err, view) {
  const box = el('div', { class: 'empty missing', 'data-missing': view });
  box.append(el('strong', { text: `No ${VIEW_TITLES[view].toLowerCase()} result. ` }),
    err.problem?.detail || err.message);
  return box;
}

async function renderDevice(main, route, ctx) {
  const [uuid, rawView] = route.parts.slice(1);
  const view = RESULT_RENDERERS[rawView] ? rawView : 'latency';
  await loadInventory(5000);
  let device = findDevice(uuid);
  if (!device) {
    try {
      device = await api(`/api/v1/devices/${encodeURIComponent(uuid)}`);
    } catch (e) {
      if (e.status !== 404) throw e; // not an answer about the device
      main.replaceChildren(el('section', {}, el('h2', { text: 'Unknown device' }),
        el('p', { class: 'empty', text: e.message })));
      markUpdated(); // the daemon answered: it knows no such device
      return;
    }
  }
  const job = route.query.get('job');
  const body = el('div', { id: 'result', 'data-view': view, class: 'result-body' });
  const head = el('section', { class: 'device-head' },
    el('div', { class: 'title-row' },
      el('h2', { text: device.name }),
      deviceSwitcher(uuid, view),
      el('a', {
        id: 'predict-link',
        class: 'button subtle',
        href: hashFor(['predict'], new URLSearchParams({ device: uuid })),
        title: 'The kernel-time model with this device\'s measured parameters',
        text: 'Predict a kernel on this device',
      }),
      el('a', {
        class: 'button subtle',
        href: `/api/v1/devices/${encodeURIComponent(uuid)}/export`,
        download: true, // the daemon's Content-Disposition names the file
        title: 'Every stored result of this device, to import into another daemon',
        text: 'Export results',
      })),
    deviceFacts(device),
    deviceTabs(uuid, view, route.query));
  const resultSection = el('section', { class: 'result-section', 'aria-label': VIEW_TITLES[view] },
    el('h2', { text: VIEW_TITLES[view] }), body);
  main.replaceChildren(head, resultSection);

  let doc;
  try {
    doc = await fetchResult(uuid, view, job);
  } catch (e) {
    if (!ctx.alive()) return;
    if (e.status === 0) throw e; // unreachable: no answer about the result either
    body.replaceChildren(missingResult(e, view));
    if (e.status !== 404) setStatus(e.message, true);
    return;
  }
  if (!ctx.alive()) return;
  body.before(provenance(doc, uuid, view));
  RESULT_RENDERERS[view](body, doc, device);
  markUpdated();
}
