/*
 * The overview (#/): the devices this daemon knows (attached to this host, or
 * stored from elsewhere such as the reference data), the newest jobs, the
 * job submission form and the import of a result bundle. The view polls the
 * API every two seconds while it is shown; a job row expands to show its
 * parameters, events and result, and "#job=ID" (or "#/?job=ID") opens one,
 * listed last when it is older than the newest 50. Each visit starts with
 * only that job open: rows opened on an earlier visit are closed.
 */

const REFRESH_MS = 2000;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const JOB_COLUMNS = 8;
const RESULT_VIEWS = ['latency', 'memory', 'banks', 'control-codes', 'dual-issue', 'model-validation'];

const overview = {
  devicesSig: '',       // the device list's JSON text, to redraw only on change
  kinds: [],            // from /api/v1/job-kinds, internal kinds left out
  kindsState: '',       // 'loaded', 'failed' (asked again by refresh) or '' (asking)
  jobs: [],             // last page from /api/v1/jobs
  expanded: new Set(),  // ids of jobs whose detail row is open, in this visit
  linked: 0,            // the job the address names (#/?job=ID), 0 if none
  details: new Map(),   // id -> single-job JSON (with result and events)
  notes: new Map(),     // id -> message about a cancel request
  renderedSig: '',      // what the job table shows now, to skip redraws
  paramsAuto: '{}',     // the params text we filled in last (user edits are kept)
  timer: 0,
  busy: false,
  again: false,
  active: false,
};

/* ---- devices ------------------------------------------------------------ */

/* A GPU's NUMA node as the device record gives it: "node 1", or "—" for
 * -1 (none, or unknown) and for records made before the field existed.
 * Also the device page's and the fleet view's. */
function fmtNumaNode(n) {
  return typeof n === 'number' && n >= 0 ? `node ${n}` : '—';
}

/* The API lists a node's GPUs together, in PCI bus order (GET
 * /api/v1/devices), so the rows show each node's GPUs side by side. */
/* A device's row: the links to its results early, where a narrow window
 * shows them (the table is wider than most screens). */
function deviceRow(d) {
  const link = el('a', { href: hashFor(['device', d.uuid, 'latency']), text: d.name });
  const views = el('span', { class: 'links' }, RESULT_VIEWS.map((v) =>
    el('a', { href: hashFor(['device', d.uuid, v]), text: VIEW_TITLES[v] })));
  const cells = [
    [d.index ?? '—', 'num'],
    [link, ''],
    [d.attached ? `${d.host || ''} (attached)` : d.host || '—', ''],
    [views, 'links'],
    [d.uuid, 'mono'],
    [d.pci_bus_id || '—', 'mono'],
    [fmtNumaNode(d.numa_node), ''],
    [d.compute_capability, ''],
    [fmtCount(d.sm_count), 'num'],
    [`${fmtKhz(d.clock_khz)} / ${fmtKhz(d.memory_clock_khz)}`, 'num'],
    [fmtBytes(d.memory_bytes), 'num'],
    [fmtBytes(d.l2_bytes), 'num'],
    [typeof d.memory_bus_width_bits === 'number' ? `${d.memory_bus_width_bits} bit` : '—', 'num'],
    [fmtCount(d.registers_per_sm), 'num'],
    [fmtBytes(d.shared_memory_per_sm), 'num'],
  ];
  return el('tr', { 'data-uuid': d.uuid, 'data-attached': d.attached ? 'true' : 'false' },
    cells.map(([value, cls]) => el('td', { class: cls || null },
      value instanceof Node ? value : String(value ?? '—'))));
}

function renderDevices(inv) {
  const devices = Array.isArray(inv.devices) ? inv.devices : [];
  const sig = JSON.stringify(inv);
  if (sig === overview.devicesSig) return;
  overview.devicesSig = sig;
  const table = $('devices');
  const empty = $('devices-empty');
  const attached = devices.filter((d) => d.attached);
  table.hidden = devices.length === 0;
  empty.hidden = attached.length !== 0;
  if (!attached.length) {
    const stored = devices.length ? ` Results stored for ${devices.length} other GPU${devices.length > 1 ? 's' : ''} are listed below.` : '';
    empty.textContent = `No GPU available: ${inv.reason || 'none found'}.${stored}`;
  }
  table.tBodies[0].replaceChildren(...devices.map(deviceRow));
  fillDeviceSelect();
}

/* ---- jobs --------------------------------------------------------------- */

function stateBadge(job) {
  const text = job.cancel_requested && !TERMINAL.has(job.state) ? `${job.state} (cancelling)` : job.state;
  return el('span', { class: `state state-${job.state}`, text });
}

/* The jobs table's column heads as index.html writes them: on a phone's
 * width each cell shows its head beside its value (style.css turns the
 * rows into cards), read from the table so the heads are written once. */
function jobHeads() {
  return [...$('jobs').tHead.rows[0].cells].map((th) => th.textContent);
}

function jobRow(job, heads) {
  const open = overview.expanded.has(job.id);
  const toggle = el('button', {
    type: 'button',
    class: 'toggle',
    'data-job-id': job.id,
    'aria-expanded': open ? 'true' : 'false',
    'aria-controls': `job-detail-${job.id}`,
    'aria-label': `Job ${job.id}: ${open ? 'hide' : 'show'} details`,
    text: String(job.id),
  });
  const device = el('td', { title: job.device || null, text: deviceLabel(job.device) });
  const created = el('td', { title: job.created_at || null, text: fmtTime(job.created_at) });
  const cells = [
    el('th', { scope: 'row' }, toggle),
    el('td', { text: job.kind }),
    device,
    el('td', {}, stateBadge(job)),
    attemptsCell(job),
    created,
    durationCell(job),
    el('td', { class: 'error', text: job.error || '' }),
  ];
  cells.forEach((cell, i) => { cell.dataset.label = heads[i]; });
  return el('tr', { class: open ? 'job open' : 'job', 'data-job-id': job.id, 'data-state': job.state }, cells);
}

/* A job's attempts (server/api/job_json.c: attempt counts the runs
 * started, max_attempts the most it may have). Only a job the daemon's
 * stop or crash interrupts is run again, while attempts remain; a worker's
 * failure is final. So "1 of 3" only while the job is queued or running;
 * once it is done, the attempts it made, and a failure says it is final. */
function attemptsCell(job) {
  if (!TERMINAL.has(job.state)) {
    const title = `at most ${plural(job.max_attempts, 'attempt')}: another only if the daemon stops while the job runs`;
    return el('td', { class: 'num', title, text: `${job.attempt} of ${job.max_attempts}` });
  }
  const made = plural(job.attempt, 'attempt');
  return el('td', { class: 'num', text: job.state === 'failed' ? `failed after ${made}` : made });
}

/* A running job shows how long it has been running so far; the cell keeps
 * its start so tickDurations() can move it on without a redraw. */
function durationCell(job) {
  if (job.state === 'running' && job.started_at && typeof job.duration_s !== 'number') {
    return el('td', { class: 'num live', title: 'running so far', 'data-started': job.started_at, text: runningFor(job.started_at) });
  }
  return el('td', { class: 'num', text: fmtDuration(job.duration_s) });
}

function runningFor(startedAt) {
  const soFar = (Date.now() - new Date(startedAt).getTime()) / 1000;
  return `${fmtDuration(Math.max(0, soFar))}…`;
}

/* The running jobs' durations, in place: rebuilding the rows for a ticking
 * clock would take the keyboard focus off their buttons. */
function tickDurations() {
  for (const td of document.querySelectorAll('#jobs td.live')) td.textContent = runningFor(td.dataset.started);
}

function jsonBlock(value) {
  return el('pre', { class: 'json', text: JSON.stringify(value, null, 2) });
}

function eventsTable(events) {
  if (!events.length) return el('p', { class: 'hint', text: 'No events.' });
  const head = el('tr', {}, ['Time', 'State', 'Message'].map((h) => el('th', { scope: 'col', text: h })));
  const rows = events.map((e) => el('tr', {},
    el('td', { title: e.at, text: fmtTime(e.at) }),
    el('td', {}, el('span', { class: `state state-${e.state}`, text: e.state })),
    el('td', { text: e.message || '' })));
  return el('table', { class: 'events' }, el('thead', {}, head), el('tbody', {}, rows));
}

function detailContent(job, detail) {
  if (!detail) return [el('p', { class: 'hint', text: 'Loading…' })];
  if (detail.failed) return [el('p', { class: 'bad', text: detail.failed })];
  const parts = [
    el('div', { class: 'block' }, el('h3', { text: 'Parameters' }), jsonBlock(detail.params ?? {})),
    el('div', { class: 'block' }, el('h3', { text: 'Events' }), eventsTable(detail.events || [])),
    el('div', { class: 'block' }, el('h3', { text: 'Result' }),
      detail.result == null ? el('p', { class: 'hint', text: 'No result.' }) : jsonBlock(detail.result)),
  ];
  if (!TERMINAL.has(job.state)) {
    parts.push(el('div', { class: 'block actions' },
      el('button', { type: 'button', class: 'cancel', 'data-job-id': job.id, onclick: () => cancelJob(job.id), text: 'Cancel job' }),
      el('span', { class: 'note', role: 'status', text: overview.notes.get(job.id) || '' })));
  } else if (detail.output) { // null where nothing is kept: a sort whose client waited for it
    const what = job.kind === 'trace-capture' ? 'captured' : 'sorted';
    parts.push(el('div', { class: 'block actions' },
      el('a', { href: detail.output, download: `trace-${job.id}.${what}`, text: `Download the ${what} trace` })));
  }
  return parts;
}

function detailRow(job) {
  return el('tr', { class: 'detail', id: `job-detail-${job.id}` },
    el('td', { colspan: JOB_COLUMNS }, el('div', { class: 'detail-body' },
      detailContent(job, overview.details.get(job.id)))));
}

function renderJobs() {
  const table = $('jobs');
  if (!overview.active || !table) return;
  const shown = overview.jobs.filter((j) => overview.expanded.has(j.id));
  const sig = JSON.stringify([overview.jobs, overview.devicesSig,
    shown.map((j) => [overview.details.get(j.id) || null, overview.notes.get(j.id) || ''])]);
  if (sig === overview.renderedSig) {
    tickDurations();
    return;
  }
  overview.renderedSig = sig;

  const focused = focusedJobButton(table);
  const heads = jobHeads();
  const rows = [];
  for (const job of overview.jobs) {
    rows.push(jobRow(job, heads));
    if (overview.expanded.has(job.id)) rows.push(detailRow(job));
  }
  table.tBodies[0].replaceChildren(...rows);
  table.hidden = overview.jobs.length === 0;
  $('jobs-empty').hidden = overview.jobs.length !== 0;
  if (focused) table.querySelector(focused)?.focus();
}

/* The selector of the job button (a row's toggle, a detail's "Cancel job")
 * that has the focus, to give it back after the rows are rebuilt; or null. */
function focusedJobButton(table) {
  const b = document.activeElement;
  if (!(b instanceof HTMLButtonElement) || !table.contains(b) || !b.dataset.jobId) return null;
  return `button.${CSS.escape(b.classList[0])}[data-job-id="${CSS.escape(b.dataset.jobId)}"]`;
}

/* Fetches the detail of each open job unless it is terminal and already known. */
async function refreshDetails() {
  const byId = new Map(overview.jobs.map((j) => [j.id, j]));
  for (const id of [...overview.expanded]) {
    if (!byId.has(id)) overview.expanded.delete(id);
  }
  await Promise.all([...overview.expanded].map(async (id) => {
    const known = overview.details.get(id);
    if (known && !known.failed && known.state === byId.get(id).state && TERMINAL.has(known.state)) return;
    try {
      overview.details.set(id, await api(`/api/v1/jobs/${encodeURIComponent(id)}`));
    } catch (e) {
      overview.details.set(id, { failed: `Could not load job ${id}: ${e.message}` });
    }
  }));
}

function setJobHash(id) {
  const url = id === null ? '#/' : `#/?job=${id}`;
  window.history.replaceState(null, '', url);
}

async function toggleJob(id) {
  if (overview.expanded.has(id)) {
    overview.expanded.delete(id);
    setJobHash(null);
    renderJobs();
    return;
  }
  overview.expanded.add(id);
  setJobHash(id);
  renderJobs();
  await refreshDetails();
  renderJobs();
}

async function cancelJob(id) {
  overview.notes.set(id, 'Cancelling…');
  renderJobs();
  try {
    const job = await api(`/api/v1/jobs/${encodeURIComponent(id)}`, { method: 'DELETE', headers: authHeaders() });
    overview.notes.set(id, job.state === 'cancelled' ? 'Cancelled.' : 'Cancel requested.');
  } catch (e) {
    overview.notes.set(id, e.message);
  }
  refreshNow();
}

function onJobsClick(ev) {
  if (ev.target.closest('tr.detail')) return;
  const row = ev.target.closest('tr.job');
  if (!row) return;
  if (ev.target.closest('button.toggle') === null && window.getSelection()?.toString()) return;
  toggleJob(Number(row.dataset.jobId));
}

/* The job the address names stays listed when it is older than the newest
 * 50 (a fleet page's link to the job that measured a figure): fetched by
 * itself, listed last. Its answer is its detail too. */
async function withLinkedJob(jobs) {
  const id = overview.linked;
  if (!id || jobs.some((j) => j.id === id)) return jobs;
  const known = overview.details.get(id);
  if (known && !known.failed && TERMINAL.has(known.state)) return [...jobs, known];
  try {
    const job = await api(`/api/v1/jobs/${encodeURIComponent(id)}`);
    overview.details.set(id, job);
    return [...jobs, job];
  } catch (e) {
    if (e.status === 404) overview.linked = 0; // no such job: asked once, not every refresh
    return jobs;
  }
}

/* ---- polling ------------------------------------------------------------ */

async function refresh() {
  if (!overview.active) return;
  if (overview.busy) {
    overview.again = true;
    return;
  }
  overview.busy = true;
  clearTimeout(overview.timer);
  try {
    const [inv, list] = await Promise.all([loadInventory(0), api('/api/v1/jobs?limit=50')]);
    if (!overview.active) return;
    renderDevices(inv);
    if (overview.kindsState === 'failed') await fillKinds(); // the daemon is back
    overview.jobs = await withLinkedJob(Array.isArray(list.jobs) ? list.jobs : []);
    await refreshDetails();
    renderJobs();
    markUpdated();
  } catch (e) {
    setStatus(e.message, true); // it says what failed ("Cannot reach the daemon: ...")
  } finally {
    overview.busy = false;
    if (overview.active) overview.timer = setTimeout(refresh, overview.again ? 0 : REFRESH_MS);
    overview.again = false;
  }
}

function refreshNow() {
  clearTimeout(overview.timer);
  return refresh();
}

/* ---- submit form -------------------------------------------------------- */

function currentKind() {
  return overview.kinds.find((k) => k.name === $('kind').value);
}

/* Only a GPU attached to this host takes jobs; stored ones are not offered. */
function fillDeviceSelect() {
  const select = $('device');
  if (!select) return;
  const kind = currentKind();
  const before = select.value;
  const attached = inventoryDevices().filter((d) => d.attached);
  let options;
  if (kind && !kind.needs_gpu) {
    options = [el('option', { value: '', text: 'none (CPU job)' })];
  } else if (!attached.length) {
    options = [el('option', { value: '', text: 'no GPU attached' })];
  } else {
    options = attached.map((d) =>
      el('option', { value: d.uuid, text: `${d.index}: ${d.name} (${shortUuid(d.uuid)})` }));
  }
  select.replaceChildren(...options);
  select.disabled = !kind || !kind.needs_gpu || !attached.length;
  if ([...select.options].some((o) => o.value === before)) select.value = before;
}

function paramDefaults(kind) {
  const out = {};
  for (const [name, spec] of Object.entries(kind.params || {})) {
    if (spec.default !== undefined && spec.default !== null) out[name] = spec.default;
  }
  return out;
}

function paramHelp(name, spec) {
  let range = '';
  if (spec.type === 'enum') range = ` one of ${(spec.enum || []).join(', ')}`;
  else if (spec.minimum !== undefined || spec.maximum !== undefined) {
    range = ` ${spec.minimum ?? '…'}..${spec.maximum ?? '…'}`;
  }
  const req = spec.required ? ', required' : '';
  const desc = spec.description ? ` — ${spec.description}` : '';
  return el('li', {}, el('code', { text: name }), ` (${spec.type}${range}${req})${desc}`);
}

function onKindChange() {
  const kind = currentKind();
  $('kind-summary').textContent = kind ? kind.summary || '' : '';
  fillDeviceSelect();
  const params = $('params');
  const text = kind ? JSON.stringify(paramDefaults(kind), null, 2) : '{}';
  if (params.value.trim() === '' || params.value === overview.paramsAuto) params.value = text;
  overview.paramsAuto = text;
  const help = kind ? Object.entries(kind.params || {}).map(([n, s]) => paramHelp(n, s)) : [];
  $('params-help').replaceChildren(...help);
}

/* The job kinds, once per page: they do not change while the daemon runs.
 * fresh: ask again all the same (a view whose only request this is, so
 * that its "Updated" means the daemon answered). */
let kindsPromise = null;
function loadKinds(fresh = false) {
  if (!kindsPromise || fresh) {
    kindsPromise = api('/api/v1/job-kinds').then((body) => (Array.isArray(body.kinds) ? body.kinds : []));
    kindsPromise.catch(() => { kindsPromise = null; });
  }
  return kindsPromise;
}

/* The Kind list; when the kinds cannot be had, the form says so and the
 * next refresh that reaches the daemon asks again. */
async function fillKinds() {
  overview.kindsState = '';
  try {
    // internal kinds (trace-sort) are created by their own endpoints, not submitted
    overview.kinds = (await loadKinds()).filter((k) => !k.internal);
  } catch (e) {
    overview.kindsState = 'failed';
    showResult('submit-result', `Could not load job kinds: ${e.message}`, true);
    return;
  }
  if (!overview.active) return;
  $('kind').replaceChildren(...overview.kinds.map((k) =>
    el('option', { value: k.name, text: k.needs_gpu ? `${k.name} (GPU)` : k.name })));
  onKindChange();
  // a stale failure of the kinds goes; a submission's answer stays
  if ($('submit-result').textContent.startsWith('Could not load job kinds')) $('submit-result').hidden = true;
  overview.kindsState = 'loaded';
}

function showResult(id, text, bad) {
  const out = $(id);
  if (!out) return;
  out.hidden = false;
  out.textContent = text;
  out.classList.toggle('bad', bad);
}

function readParams() {
  const text = $('params').value.trim() || '{}';
  const value = JSON.parse(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error('must be a JSON object');
  }
  return value;
}

async function submitJob(ev) {
  ev.preventDefault();
  const kind = currentKind();
  if (!kind) {
    showResult('submit-result', 'Pick a job kind first.', true);
    return;
  }
  let params;
  try {
    params = readParams();
  } catch (e) {
    showResult('submit-result', `Parameters: ${e.message}`, true);
    return;
  }
  const body = { kind: kind.name, params };
  if (kind.needs_gpu) body.device = $('device').value || null;
  try {
    const job = await apiPost('/api/v1/jobs', body, authHeaders());
    showResult('submit-result', `Job ${job.id} submitted (${job.state}).`, false);
    refreshNow();
  } catch (e) {
    showResult('submit-result', e.message, true);
  }
}

/* ---- import ------------------------------------------------------------- */

async function importBundle(ev) {
  ev.preventDefault();
  const file = $('import-file').files[0];
  if (!file) {
    showResult('import-result', 'Choose a bundle file first.', true);
    return;
  }
  try {
    const answer = await api('/api/v1/import', {
      method: 'POST',
      headers: { 'Content-Type': file.type || 'application/octet-stream', ...authHeaders() },
      body: file,
    });
    showResult('import-result', `Imported ${file.name}: ${importSummary(answer)}.`, false);
    shared.inventoryAt = 0;
    refreshNow();
  } catch (e) {
    showResult('import-result', e.message, true);
  }
}

/* "12 results, 12 new (0 held already); 2 devices, 2 new" from POST
 * /api/v1/import's counts. */
function importSummary(a) {
  const n = (v) => (typeof v === 'number' ? v : '?');
  return `${n(a?.results)} results, ${n(a?.results_added)} new (${n(a?.results_held)} held already); ` +
    `${n(a?.devices)} devices, ${n(a?.devices_added)} new`;
}

/* ---- the view ------------------------------------------------------------ */

async function renderOverview(main, route) {
  main.replaceChildren(fromTemplate('tpl-overview'));
  overview.active = true;
  overview.devicesSig = '';
  overview.renderedSig = '';
  const linked = Number(route.query.get('job') || route.legacyJob || NaN);
  overview.linked = Number.isInteger(linked) && linked > 0 ? linked : 0;
  // a fresh view opens only the job its address names: rows opened on an
  // earlier visit stay closed, and their cancel notes go with them
  overview.expanded = new Set(overview.linked ? [overview.linked] : []);
  overview.notes.clear();
  $('kind').addEventListener('change', onKindChange);
  $('submit').addEventListener('submit', submitJob);
  $('import').addEventListener('submit', importBundle);
  $('jobs').tBodies[0].addEventListener('click', onJobsClick);
  await Promise.all([fillKinds(), refreshNow()]);
}

function leaveOverview() {
  overview.active = false;
  clearTimeout(overview.timer);
}
