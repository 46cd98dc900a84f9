/*
 * gpuprobe dashboard logic, loaded by index.html. Polls the JSON API every
 * two seconds and renders this host's devices and the newest jobs; a job row
 * expands to show its parameters, events and result; a form submits jobs.
 * No dependencies. Every piece of data goes into the page as text (textContent
 * or Text nodes), never as HTML.
 */
'use strict';

const REFRESH_MS = 2000;
const TOKEN_KEY = 'gpuprobe.token';
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const JOB_COLUMNS = 8;

const state = {
  devices: [],          // last device list from /api/v1/devices
  devicesSig: '',       // its JSON text, to rebuild the device select only on change
  kinds: [],            // from /api/v1/job-kinds
  jobs: [],             // last page from /api/v1/jobs
  expanded: new Set(),  // ids of jobs whose detail row is open
  details: new Map(),   // id -> single-job JSON (with result and events)
  notes: new Map(),     // id -> message about a cancel request
  renderedSig: '',      // what the job table shows now, to skip redraws
  paramsAuto: '{}',     // the params text we filled in last (user edits are kept)
  offline: false,       // the last refresh failed
  timer: 0,
  busy: false,
  again: false,
};

/* ---- small helpers ------------------------------------------------------ */

function $(id) {
  return document.getElementById(id);
}

/* Creates an element. props: class, text, on<event>, or attributes;
 * children: nodes or strings (strings become Text nodes). */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function pad(n, width = 2) {
  return String(n).padStart(width, '0');
}

function fmtBytes(n) {
  if (typeof n !== 'number') return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  const digits = i === 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${units[i]}`;
}

function fmtKhz(khz) {
  if (typeof khz !== 'number' || khz <= 0) return '—';
  return khz >= 1e6 ? `${(khz / 1e6).toFixed(2)} GHz` : `${Math.round(khz / 1e3)} MHz`;
}

function fmtCount(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '—';
}

/* RFC 3339 from the API -> "YYYY-MM-DD HH:MM:SS" in the browser's time zone. */
function fmtTime(t) {
  if (!t) return '—';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function fmtDuration(s) {
  if (typeof s !== 'number' || s < 0) return '—';
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${pad(Math.floor(s % 60))}s`;
  return `${Math.floor(m / 60)}h ${pad(m % 60)}m`;
}

function shortUuid(uuid) {
  return uuid.length > 16 ? `${uuid.slice(0, 12)}…` : uuid;
}

/* One line out of an RFC 9457 problem (or whatever came back). */
function problemText(problem, response) {
  if (problem && typeof problem === 'object' && (problem.title || problem.detail)) {
    let text = problem.title || `HTTP ${response.status}`;
    if (problem.detail) text += `: ${problem.detail}`;
    if (problem.field) text += ` (field ${problem.field})`;
    return `${response.status} ${text}`;
  }
  return `HTTP ${response.status} ${response.statusText}`.trim();
}

async function api(path, options = {}) {
  const headers = { Accept: 'application/json, application/problem+json', ...options.headers };
  const response = await fetch(path, { cache: 'no-store', ...options, headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const err = new Error(problemText(body, response));
    err.status = response.status;
    throw err;
  }
  return body;
}

/* The status line changes every refresh, so it is not a live region; only a
 * change between reachable and unreachable is announced (through #alert). */
function setStatus(text, bad) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('bad', bad);
  if (bad !== state.offline) {
    state.offline = bad;
    $('alert').textContent = bad ? text : 'Connection to the daemon restored.';
  }
}

function authHeaders() {
  const token = $('token').value.trim();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/* ---- devices ------------------------------------------------------------ */

function deviceRow(d) {
  const cells = [
    [d.index, 'num'],
    [d.name, ''],
    [d.uuid, 'mono'],
    [d.compute_capability, ''],
    [fmtCount(d.sm_count), 'num'],
    [`${fmtKhz(d.clock_khz)} / ${fmtKhz(d.memory_clock_khz)}`, 'num'],
    [fmtBytes(d.memory_bytes), 'num'],
    [fmtBytes(d.l2_bytes), 'num'],
    [typeof d.memory_bus_width_bits === 'number' ? `${d.memory_bus_width_bits} bit` : '—', 'num'],
    [fmtCount(d.registers_per_sm), 'num'],
    [fmtBytes(d.shared_memory_per_sm), 'num'],
  ];
  return el('tr', { 'data-uuid': d.uuid },
    ...cells.map(([value, cls]) => el('td', { class: cls || null, text: String(value ?? '—') })));
}

function renderDevices(inv) {
  $('host').textContent = inv.host?.hostname || '—';
  $('driver').textContent = inv.driver_version || 'none';
  $('cuda').textContent = inv.cuda_driver_version || '—';
  const devices = Array.isArray(inv.devices) ? inv.devices : [];
  const sig = JSON.stringify(inv);
  if (sig === state.devicesSig) return;
  state.devicesSig = sig;
  state.devices = devices;
  const table = $('devices');
  const empty = $('devices-empty');
  table.hidden = devices.length === 0;
  empty.hidden = devices.length !== 0;
  empty.textContent = devices.length ? '' : `No GPU available: ${inv.reason || 'none found'}`;
  table.tBodies[0].replaceChildren(...devices.map(deviceRow));
  fillDeviceSelect();
}

function deviceLabel(uuid) {
  if (!uuid) return 'CPU';
  const d = state.devices.find((x) => x.uuid === uuid);
  return d ? `${d.index}: ${d.name}` : shortUuid(uuid);
}

/* ---- jobs --------------------------------------------------------------- */

function stateBadge(job) {
  const text = job.cancel_requested && !TERMINAL.has(job.state) ? `${job.state} (cancelling)` : job.state;
  return el('span', { class: `state state-${job.state}`, text });
}

function jobRow(job) {
  const open = state.expanded.has(job.id);
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
  return el('tr', { class: open ? 'job open' : 'job', 'data-job-id': job.id, 'data-state': job.state },
    el('th', { scope: 'row' }, toggle),
    el('td', { text: job.kind }),
    device,
    el('td', {}, stateBadge(job)),
    el('td', { class: 'num', text: `${job.attempt}/${job.max_attempts}` }),
    created,
    durationCell(job),
    el('td', { class: 'error', text: job.error || '' }));
}

/* A running job shows how long it has been running so far. */
function durationCell(job) {
  if (job.state === 'running' && job.started_at && typeof job.duration_s !== 'number') {
    const soFar = (Date.now() - new Date(job.started_at).getTime()) / 1000;
    return el('td', { class: 'num live', title: 'running so far', text: `${fmtDuration(Math.max(0, soFar))}…` });
  }
  return el('td', { class: 'num', text: fmtDuration(job.duration_s) });
}

function jsonBlock(value) {
  return el('pre', { class: 'json', text: JSON.stringify(value, null, 2) });
}

function eventsTable(events) {
  if (!events.length) return el('p', { class: 'hint', text: 'No events.' });
  const head = el('tr', {}, ...['Time', 'State', 'Message'].map((h) => el('th', { scope: 'col', text: h })));
  const rows = events.map((e) => el('tr', {},
    el('td', { title: e.at, text: fmtTime(e.at) }),
    el('td', {}, el('span', { class: `state state-${e.state}`, text: e.state })),
    el('td', { text: e.message || '' })));
  return el('table', { class: 'events' }, el('thead', {}, head), el('tbody', {}, ...rows));
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
      el('button', { type: 'button', class: 'cancel', onclick: () => cancelJob(job.id), text: 'Cancel job' }),
      el('span', { class: 'note', role: 'status', text: state.notes.get(job.id) || '' })));
  }
  return parts;
}

function detailRow(job) {
  return el('tr', { class: 'detail', id: `job-detail-${job.id}` },
    el('td', { colspan: JOB_COLUMNS }, el('div', { class: 'detail-body' },
      ...detailContent(job, state.details.get(job.id)))));
}

function renderJobs() {
  const shown = state.jobs.filter((j) => state.expanded.has(j.id));
  const ticking = state.jobs.some((j) => j.state === 'running') ? Math.floor(Date.now() / 1000) : 0;
  const sig = JSON.stringify([state.jobs, state.devicesSig, ticking,
    shown.map((j) => [state.details.get(j.id) || null, state.notes.get(j.id) || ''])]);
  if (sig === state.renderedSig) return;
  state.renderedSig = sig;

  const focused = document.activeElement?.dataset?.jobId;
  const rows = [];
  for (const job of state.jobs) {
    rows.push(jobRow(job));
    if (state.expanded.has(job.id)) rows.push(detailRow(job));
  }
  const table = $('jobs');
  table.tBodies[0].replaceChildren(...rows);
  table.hidden = state.jobs.length === 0;
  $('jobs-empty').hidden = state.jobs.length !== 0;
  if (focused) table.querySelector(`button.toggle[data-job-id="${CSS.escape(focused)}"]`)?.focus();
}

/* Fetches the detail of each open job unless it is terminal and already known. */
async function refreshDetails() {
  const byId = new Map(state.jobs.map((j) => [j.id, j]));
  for (const id of [...state.expanded]) {
    if (!byId.has(id)) state.expanded.delete(id);
  }
  await Promise.all([...state.expanded].map(async (id) => {
    const known = state.details.get(id);
    if (known && !known.failed && known.state === byId.get(id).state && TERMINAL.has(known.state)) return;
    try {
      state.details.set(id, await api(`/api/v1/jobs/${encodeURIComponent(id)}`));
    } catch (e) {
      state.details.set(id, { failed: `Could not load job ${id}: ${e.message}` });
    }
  }));
}

/* The address "#job=12" opens job 12's row, so a job can be linked to. */
function jobFromHash() {
  const m = /^#job=(\d+)$/.exec(window.location.hash);
  return m ? Number(m[1]) : null;
}

function setHash(id) {
  const url = id === null ? window.location.pathname + window.location.search : `#job=${id}`;
  window.history.replaceState(null, '', url);
}

async function toggleJob(id) {
  if (state.expanded.has(id)) {
    state.expanded.delete(id);
    if (jobFromHash() === id) setHash(null);
    renderJobs();
    return;
  }
  state.expanded.add(id);
  setHash(id);
  renderJobs();
  await refreshDetails();
  renderJobs();
}

async function cancelJob(id) {
  state.notes.set(id, 'Cancelling…');
  renderJobs();
  try {
    const job = await api(`/api/v1/jobs/${encodeURIComponent(id)}`, { method: 'DELETE', headers: authHeaders() });
    state.notes.set(id, job.state === 'cancelled' ? 'Cancelled.' : 'Cancel requested.');
  } catch (e) {
    state.notes.set(id, e.message);
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

/* ---- polling ------------------------------------------------------------ */

async function refresh() {
  if (state.busy) {
    state.again = true;
    return;
  }
  state.busy = true;
  clearTimeout(state.timer);
  try {
    const [inv, list] = await Promise.all([api('/api/v1/devices'), api('/api/v1/jobs?limit=50')]);
    renderDevices(inv);
    state.jobs = Array.isArray(list.jobs) ? list.jobs : [];
    await refreshDetails();
    renderJobs();
    setStatus(`Updated ${fmtTime(new Date().toISOString()).slice(11)}`, false);
  } catch (e) {
    setStatus(`Cannot reach the daemon: ${e.message}`, true);
  } finally {
    state.busy = false;
    state.timer = setTimeout(refresh, state.again ? 0 : REFRESH_MS);
    state.again = false;
  }
}

function refreshNow() {
  clearTimeout(state.timer);
  refresh();
}

/* ---- submit form -------------------------------------------------------- */

function currentKind() {
  return state.kinds.find((k) => k.name === $('kind').value);
}

function fillDeviceSelect() {
  const select = $('device');
  const kind = currentKind();
  const before = select.value;
  let options;
  if (kind && !kind.needs_gpu) {
    options = [el('option', { value: '', text: 'none (CPU job)' })];
  } else if (!state.devices.length) {
    options = [el('option', { value: '', text: 'no GPU available' })];
  } else {
    options = state.devices.map((d) =>
      el('option', { value: d.uuid, text: `${d.index}: ${d.name} (${shortUuid(d.uuid)})` }));
  }
  select.replaceChildren(...options);
  select.disabled = !kind || !kind.needs_gpu || !state.devices.length;
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
  if (params.value.trim() === '' || params.value === state.paramsAuto) params.value = text;
  state.paramsAuto = text;
  const help = kind ? Object.entries(kind.params || {}).map(([n, s]) => paramHelp(n, s)) : [];
  $('params-help').replaceChildren(...help);
}

async function loadKinds() {
  try {
    const body = await api('/api/v1/job-kinds');
    // internal kinds (trace-sort) are created by their own endpoints, not submitted
    state.kinds = Array.isArray(body.kinds) ? body.kinds.filter((k) => !k.internal) : [];
    $('kind').replaceChildren(...state.kinds.map((k) =>
      el('option', { value: k.name, text: k.needs_gpu ? `${k.name} (GPU)` : k.name })));
    onKindChange();
  } catch (e) {
    showResult(`Could not load job kinds: ${e.message}`, true);
    setTimeout(loadKinds, 5000);
  }
}

function showResult(text, bad) {
  const out = $('submit-result');
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
    showResult('Pick a job kind first.', true);
    return;
  }
  let params;
  try {
    params = readParams();
  } catch (e) {
    showResult(`Parameters: ${e.message}`, true);
    return;
  }
  const body = { kind: kind.name, params };
  if (kind.needs_gpu) body.device = $('device').value || null;
  try {
    const job = await api('/api/v1/jobs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...authHeaders() },
      body: JSON.stringify(body),
    });
    showResult(`Job ${job.id} submitted (${job.state}).`, false);
    refreshNow();
  } catch (e) {
    showResult(e.message, true);
  }
}

/* ---- start -------------------------------------------------------------- */

async function loadVersion() {
  try {
    const h = await api('/healthz');
    $('version').textContent = h.version || '—';
  } catch {
    $('version').textContent = '—';
  }
}

function init() {
  const token = $('token');
  token.value = sessionStorage.getItem(TOKEN_KEY) || '';
  token.addEventListener('input', () => sessionStorage.setItem(TOKEN_KEY, token.value.trim()));
  $('kind').addEventListener('change', onKindChange);
  $('submit').addEventListener('submit', submitJob);
  $('jobs').tBodies[0].addEventListener('click', onJobsClick);
  const linked = jobFromHash();
  if (linked !== null) state.expanded.add(linked);
  loadVersion();
  loadKinds();
  refresh();
}

document.addEventListener('DOMContentLoaded', init);
