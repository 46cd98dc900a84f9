/*
 * gpuprobe dashboard: what every view shares. DOM building (el), number and
 * time formatting, the JSON API client with RFC 9457 problems as errors, the
 * write token, the status line, and the device list cache.
 *
 * The files of web/js/ are concatenated by the Makefile, in the order of its
 * WEB_JS list, after Debian's Chart.js, into one strict-mode function served
 * as /app.js: they share one scope and need no module loader. Every piece of
 * data goes into the page as text (textContent or Text nodes), never as HTML.
 */

const TOKEN_KEY = 'gpuprobe.token';

const shared = {
  inventory: null,      // last answer of /api/v1/devices
  inventoryAt: 0,       // when it came (ms)
  offline: false,       // the last request to the daemon failed
};

/* ---- DOM ------------------------------------------------------------------ */

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
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

/* A copy of <template id=ID>'s content. */
function fromTemplate(id) {
  return $(id).content.cloneNode(true);
}

/* A <dl> of [term, value] pairs; a value may be a node. */
function kvList(pairs, cls = 'kv') {
  return el('dl', { class: cls }, pairs.filter((p) => p).map(([k, v]) =>
    el('div', {}, el('dt', { text: k }), el('dd', {}, v instanceof Node ? v : String(v ?? '—')))));
}

/* A table from column specs {head, cls?, value(row) -> text|node, title?(row)}. */
function dataTable(columns, rows, caption) {
  const head = el('tr', {}, columns.map((c) => el('th', { scope: 'col', class: c.cls || null, text: c.head })));
  const body = rows.map((r) => el('tr', {}, columns.map((c) => {
    const v = c.value(r);
    return el('td', { class: c.cls || null, title: c.title ? c.title(r) : null },
      v instanceof Node ? v : String(v ?? '—'));
  })));
  return el('table', { class: 'data' },
    caption ? el('caption', { text: caption }) : null,
    el('thead', {}, head), el('tbody', {}, body));
}

/* ---- formatting ----------------------------------------------------------- */

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
  const digits = i === 0 || v >= 100 || Number.isInteger(v) ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${units[i]}`;
}

function fmtKhz(khz) {
  if (typeof khz !== 'number' || khz <= 0) return '—';
  return khz >= 1e6 ? `${(khz / 1e6).toFixed(2)} GHz` : `${Math.round(khz / 1e3)} MHz`;
}

function fmtCount(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '—';
}

/* Bytes per second as GB/s. */
function fmtGBs(v) {
  return `${fmtNum(v / 1e9)} GB/s`;
}

/* "1 GPU", "2 GPUs": a count and its noun. */
function plural(n, noun) {
  return `${fmtCount(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/* A number with about `sig` significant digits, no exponent for everyday sizes. */
function fmtNum(n, sig = 4) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  if (Number.isInteger(n) && Math.abs(n) < 1e7) return String(n);
  const a = Math.abs(n);
  if (a !== 0 && (a < 1e-3 || a >= 1e7)) return n.toExponential(sig - 1);
  return String(Number(n.toPrecision(sig)));
}

/* Seconds as s, ms or µs. */
function fmtSeconds(s) {
  if (typeof s !== 'number' || !Number.isFinite(s)) return '—';
  const a = Math.abs(s);
  if (a >= 1) return `${fmtNum(s)} s`;
  if (a >= 1e-3) return `${fmtNum(s * 1e3)} ms`;
  return `${fmtNum(s * 1e6)} µs`;
}

function fmtPercent(x, digits = 1) {
  return typeof x === 'number' && Number.isFinite(x) ? `${(x * 100).toFixed(digits)} %` : '—';
}

/* Names the browser's time zone at an instant (made once: the zone does
 * not change under a page). en-US names, so the letters are the same in
 * every language: "UTC", "EST", "GMT+1", "GMT+5:30". */
const ZONE_NAMES = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' });

/* An instant (RFC 3339 from the API, or ms) as "YYYY-MM-DD HH:MM:SS ZONE"
 * in the browser's time zone, or "HH:MM:SS ZONE" without the date: every
 * time the dashboard shows comes through here, so none is without its
 * zone (a reader comparing with a log in UTC, or another site's page). */
function fmtTime(t, { date = true } = {}) {
  if (!t) return '—';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const zone = ZONE_NAMES.formatToParts(d).find((p) => p.type === 'timeZoneName')?.value;
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${zone ? ` ${zone}` : ''}`;
  return date ? `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock}` : clock;
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
  return typeof uuid === 'string' && uuid.length > 16 ? `${uuid.slice(0, 12)}…` : String(uuid ?? '');
}

/* A FIGURE of the API ({median,min,max} | {error} | null) -> its median or null. */
function median(fig) {
  return fig && typeof fig.median === 'number' ? fig.median : null;
}

/* A FIGURE as text: the median, with the spread when there is one. */
function fmtFigure(fig, sig = 4) {
  if (fig === null || fig === undefined) return '—';
  if (fig.error) return 'not measured';
  return fmtNum(fig.median, sig);
}

/* FIGUREs of one unit as text, "/" between them: "600.5 / 612 cycles". A
 * figure that failed is "not measured", with its reason unless short (a
 * table cell, whose title gives it): never a unit after it, which would
 * read as a value. */
function fmtFigures(figs, unit, short = false) {
  const failed = (f) => Boolean(f?.error);
  const text = figs.map((f) => (failed(f) ? (short ? 'not measured' : `not measured (${f.error})`) : fmtFigure(f)));
  if (figs.every(failed)) return text.join(' / ');
  return !figs.some(failed) ? `${text.join(' / ')} ${unit}`
    : text.map((t, i) => (failed(figs[i]) ? t : `${t} ${unit}`)).join(' / ');
}

/* A FIGURE's spread and failure, for a cell's title. */
function figureTitle(fig) {
  if (!fig) return null;
  if (fig.error) return fig.error;
  if (typeof fig.min === 'number' && typeof fig.max === 'number') {
    return `median ${fmtNum(fig.median, 6)}, min ${fmtNum(fig.min, 6)}, max ${fmtNum(fig.max, 6)}`;
  }
  return null;
}

/* ---- the API ---------------------------------------------------------------- */

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

/* fetch() whose failures (network or HTTP) throw an Error with .status and
 * .problem; answers the Response. */
async function apiResponse(path, options = {}) {
  const headers = { Accept: 'application/json, application/problem+json', ...options.headers };
  let response;
  try {
    response = await fetch(path, { cache: 'no-store', ...options, headers });
  } catch (e) {
    const err = new Error(`Cannot reach the daemon: ${e.message}`);
    err.status = 0;
    throw err;
  }
  if (!response.ok) {
    const problem = await response.json().catch(() => null);
    const err = new Error(problemText(problem, response));
    err.status = response.status;
    err.problem = problem;
    throw err;
  }
  return response;
}

/* The JSON body of a successful request. */
async function api(path, options = {}) {
  const response = await apiResponse(path, options);
  return response.json();
}

/* POSTs a JSON body. */
function apiPost(path, body, headers = {}) {
  return api(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/* ---- token and status --------------------------------------------------------- */

function authHeaders() {
  const token = $('token').value.trim();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

function initToken() {
  const token = $('token');
  token.value = sessionStorage.getItem(TOKEN_KEY) || '';
  token.addEventListener('input', () => sessionStorage.setItem(TOKEN_KEY, token.value.trim()));
}

/* The status line changes every refresh, so it is not a live region; only a
 * change between reachable and unreachable is announced (through #alert). */
function setStatus(text, bad) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('bad', bad);
  if (bad !== shared.offline) {
    shared.offline = bad;
    $('alert').textContent = bad ? text : 'Connection to the daemon restored.';
  }
}

function markUpdated() {
  setStatus(`Updated ${fmtTime(Date.now(), { date: false })}`, false);
}

/* ---- devices ------------------------------------------------------------------- */

/* /api/v1/devices, fetched again when older than maxAgeMs. */
async function loadInventory(maxAgeMs = 0) {
  if (shared.inventory && Date.now() - shared.inventoryAt <= maxAgeMs) return shared.inventory;
  const inv = await api('/api/v1/devices');
  shared.inventory = inv;
  shared.inventoryAt = Date.now();
  $('host').textContent = inv.host?.hostname || '—';
  $('driver').textContent = inv.driver_version || 'none';
  $('cuda').textContent = inv.cuda_driver_version || '—';
  return inv;
}

function inventoryDevices() {
  const list = shared.inventory?.devices;
  return Array.isArray(list) ? list : [];
}

function findDevice(uuid) {
  return inventoryDevices().find((d) => d.uuid === uuid) || null;
}

/* "NVIDIA H200 (reference)" or "0: NVIDIA H200" for an attached one. */
function deviceLabel(uuid) {
  if (!uuid) return 'CPU';
  const d = findDevice(uuid);
  if (!d) return shortUuid(uuid);
  if (d.attached) return `${d.index}: ${d.name}`;
  return d.host ? `${d.name} (${d.host})` : d.name;
}

/* Device names that repeat (two H100s) get the part of their UUID that
 * tells them apart: uuid -> label. */
function deviceNames(devices) {
  const groups = new Map();
  for (const d of devices) groups.set(d.name, [...(groups.get(d.name) || []), d.uuid]);
  const names = new Map();
  for (const [name, uuids] of groups) {
    const parts = uuids.length > 1 ? uuidParts(uuids) : [];
    uuids.forEach((u, i) => names.set(u, parts.length ? `${name} ${parts[i]}` : name));
  }
  return names;
}

/* The shortest pieces of (distinct) UUIDs that are all different: from the
 * first character where they differ, at least 8 characters (UUIDs of one
 * vendor differ early: "5f3a91c2" as before), more while two are alike;
 * "…" marks a common start left out (a fleet whose UUIDs share theirs).
 * Ends at the whole rest of each UUID, which differs. */
function uuidParts(uuids) {
  let from = 0;
  while (uuids.every((u) => u[from] !== undefined && u[from] === uuids[0][from])) from += 1;
  const longest = Math.max(...uuids.map((u) => u.length));
  const lead = from > 'GPU-'.length ? '…' : '';
  const start = lead ? from : Math.min(from, 'GPU-'.length);
  for (let n = 8; ; n += 1) {
    const parts = uuids.map((u) => u.slice(start, from + n));
    if (new Set(parts).size === uuids.length || from + n >= longest) return parts.map((p) => lead + p);
  }
}

/* ---- addresses ------------------------------------------------------------------- */

/* "#/a/b?x=1" -> {parts: ['a','b'], query: URLSearchParams} */
function parseHash(hash) {
  const h = hash.replace(/^#\/?/, '');
  const q = h.indexOf('?');
  const path = q < 0 ? h : h.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : h.slice(q + 1));
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), query };
}

function hashFor(parts, query) {
  const path = parts.map(encodeURIComponent).join('/');
  const q = query && [...query.keys()].length ? `?${query.toString()}` : '';
  return `#/${path}${q}`;
}
