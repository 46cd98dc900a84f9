#!/usr/bin/env node
/*
 * The dashboard in a real browser: playwright-core drives Debian's chromium
 * (no browser download) against a running gpuprobe daemon, and every
 * expectation is read from the same daemon's JSON API, so the test proves
 * that the page shows what the API says:
 *   - the overview lists the devices and jobs (succeeded jobs with their
 *     badges, the reason when no GPU is attached), a job's deep link opens
 *     its parameters, events and result, the kinds come from the API; a
 *     fresh overview opens only the job its address names; a job that is
 *     done shows the attempts it made ("failed after 1 attempt"), not
 *     "1/3"; at 390 px the jobs table fits the screen, a job open;
 *   - every time is shown with its zone (the browser in America/New_York):
 *     jobs' creation and events, a result's provenance, the status line;
 *   - every device view draws its charts with the API's number of series and
 *     points (instruction table rows and sorting, memory curves and cache
 *     capacities, bank map and conflict costs, control-code sweeps and wrong
 *     answers, dual-issue bars against the reference and the peak, model
 *     validation), and the compare view puts every device on one chart,
 *     each device's series told apart without colour (a hatching drawn on
 *     its bars, a point style and dash of its own);
 *   - the compare view's side-by-side tables (L2 partitions, distributed
 *     shared memory, asynchronous copies; TFLOP/s beside the throughput;
 *     issue order and reuse cache) hold in each device's column exactly
 *     that device's figures as its result document has them, and "not
 *     measured" in the column of a device whose result lacks the member;
 *   - the occupancy calculator's answer equals POST /api/v1/model/occupancy;
 *   - the kernel-time predictor (#/predict?device=UUID, linked from a
 *     device's page): a PTX file uploaded with its launch and parameter
 *     shows POST /api/v1/model/predict's time, every intermediate of the
 *     prediction, each parameter with a link to the job that measured it,
 *     the per-warp counts and a chart of a repetition's formula and floors;
 *     a parameter by its index from 0 predicts as by its name; the form's
 *     and openapi.json's words on static shared memory (from the PTX's
 *     .shared declarations when left out) and on parameters (names or
 *     indexes, unknown or repeated ones refused) are the server's rules;
 *     an empty PTX shows the server's reason and field; a device without
 *     measurements (imported with no results) its 409 with a link to the
 *     device's page for the probe to run; at 390 px no sideways scroll;
 *   - a trace uploaded from the page is summarised per SM and its download
 *     equals the API's sorted output, both when the API answers at once
 *     and when it makes the sort a job;
 *   - a job is submitted and cancelled from the page; a bad token is shown
 *     as an error; export/import of result bundles when the API has them;
 *   - the fleet page (#/fleet) as GET /api/v1/fleet answers it: the rule,
 *     each model's GPUs, hosts, drivers and outliers, a model whose GPUs
 *     run different drivers flagged (GPUs of unknown driver listed, but
 *     no second driver), the outliers table row by row (each
 *     with its driver), the figures (sorted by outliers), the devices with
 *     their drivers and outlier counts highlighted, each node's GPUs in slot
 *     order and the shipped reference data apart, filtered by model and by
 *     host as the API filters them;
 *     the links of an outlier to its job and to the device's result; a
 *     figure's distribution (GET /api/v1/fleet/distribution) with every
 *     value a point, the outliers and the bounds, the linked device marked;
 *     a category's bars; before a fleet is pushed, what to do instead;
 *   - README.md's dashboard table has a row for every view opened;
 *   - no console error anywhere, except the 403 the bad-token step causes.
 * It prints each view's load time (navigation start to the view's data
 * drawn, as the page marks it) and, with GPUPROBE_SCREENSHOTS=DIR, writes a
 * screenshot of each view there.
 *
 * Environment: BASE_URL (the daemon), TOKEN (a write token), FIXTURES (the
 * trace fixtures folder), CHROMIUM (default /usr/bin/chromium),
 * GPUPROBE_WEB_L2_PARTITIONS (the least number of memory results whose L2
 * partition search the memory view must show), GPUPROBE_WEB_DSMEM (the
 * least number whose distributed shared memory table it must show),
 * GPUPROBE_WEB_ASYNC_COPY (how many results with asynchronous copies it
 * must show), GPUPROBE_WEB_PLACEMENT (how many with a block placement),
 * GPUPROBE_SCREENSHOTS, GPUPROBE_WEB_DEVICES (the least number of devices
 * with all six results the database must hold; default 0),
 * GPUPROBE_WEB_BOTH_SORTS=1 (the daemon's trace_sync_limit answers
 * sample.csv at once and sorts kernel-1.trace as a job, as t_web.sh sets it),
 * GPUPROBE_WEB_FLEET=DIR (bundles written by fleet-synth, pushed with POST
 * /api/v1/import between the fleet page before and after),
 * GPUPROBE_WEB_COMPARE_SIDE=1 (the side-by-side tables must have held at
 * least two device columns to their documents and shown one placeholder),
 * GPUPROBE_WEB_DRIVER_SPLIT=1 (the fleet pushed must split a model over
 * drivers, and the page must have flagged it), GPUPROBE_WEB_DRIVER_UNKNOWN=1
 * (a model of the fleet pushed must have GPUs of unknown driver beside GPUs
 * of one known driver, and the page must not have flagged it as a split).
 * Exit status 0 when every check passed; the first failure ends the run.
 */
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const BASE = process.env.BASE_URL;
const TOKEN = process.env.TOKEN;
const FIXTURES = process.env.FIXTURES;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = process.env.GPUPROBE_SCREENSHOTS || '';
const WANT_DEVICES = Number(process.env.GPUPROBE_WEB_DEVICES || 0);
const FLEET = process.env.GPUPROBE_WEB_FLEET || '';
const VIEWS = ['latency', 'memory', 'banks', 'control-codes', 'dual-issue', 'model-validation'];
const TIMEOUT_MS = 20000;

const loadTimes = [];
const viewsOpened = new Set(); // the views openView loaded, by their data-ready name
const consoleErrors = [];
let allowedErrors = null; // a RegExp of console errors expected in the current step
let step = 'start';

function fail(message) {
  throw new Error(`${step}: ${message}`);
}

function check(cond, message) {
  if (!cond) fail(message);
}

function equal(got, want, what) {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    fail(`${what}: got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  }
}

/* ---- the API, from node --------------------------------------------------- */

async function apiGet(p) {
  const r = await fetch(BASE + p);
  if (!r.ok) throw new Error(`GET ${p} -> ${r.status}`);
  return r.json();
}

async function apiTry(p) {
  const r = await fetch(BASE + p);
  return r.ok ? r.json() : null;
}

async function apiPost(p, body, token) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(BASE + p, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

async function waitJob(id, states, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const j = await apiGet(`/api/v1/jobs/${id}`);
    if (states.includes(j.state)) return j;
    if (Date.now() > end) fail(`job ${id} is ${j.state}, expected ${states.join('|')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const median = (f) => (f && typeof f.median === 'number' ? f.median : null);

/* A FIGURE as a table cell writes it: its median to 4 significant digits,
 * "not measured" when it failed, "—" when absent. */
function figureText(f) {
  if (!f) return '—';
  if (f.error) return 'not measured';
  const n = f.median;
  if (Number.isInteger(n) && Math.abs(n) < 1e7) return String(n);
  const a = Math.abs(n);
  return a !== 0 && (a < 1e-3 || a >= 1e7) ? n.toExponential(3) : String(Number(n.toPrecision(4)));
}

/* ---- the page ------------------------------------------------------------- */

/* Loads the page afresh at #HASH and waits until the view named `ready` has
 * drawn its data; records the load time the page measured. */
async function openView(page, hash, ready, label) {
  step = `view ${label || ready}`;
  await page.goto('about:blank');
  await page.goto(`${BASE}/${hash}`);
  await page.waitForSelector(`#view[data-ready="${ready}"]`, { timeout: TIMEOUT_MS });
  viewsOpened.add(ready);
  const ms = Number(await page.$eval('#view', (v) => v.dataset.readyMs));
  loadTimes.push({ view: label || ready, ms });
  return ms;
}

async function screenshot(page, name) {
  if (!SHOTS) return;
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/* What each Chart.js chart under `selector` holds: per dataset its label,
 * type, point count (before any decimation) and whether it is a marker line. */
function charts(page, selector) {
  return page.$$eval(`${selector} canvas`, (canvases) => canvases.map((c) => {
    const chart = Chart.getChart(c);
    if (!chart) return null;
    return {
      type: chart.config.type,
      labels: chart.data.labels ? chart.data.labels.length : null,
      datasets: chart.data.datasets.map((d) => ({
        label: d.label,
        type: d.type || chart.config.type,
        n: (d._data || d.data).length,
        marker: Boolean(d.marker),
        device: d.device || null,
        style: JSON.stringify([d.borderColor, d.pointStyle || 'circle', d.borderDash || []]),
        // what tells the series apart without its colour: a bar's hatching
        // (drawn: its fill a pattern unless 'solid'), a point's style and a line's dash
        shape: JSON.stringify((d.type || chart.config.type) === 'bar' ? [d.hatch || null] : [d.pointStyle || 'circle', d.borderDash || []]),
        hatched: d.hatch === 'solid' || d.backgroundColor instanceof CanvasPattern,
        pointLabels: Array.isArray(d.pointLabels) ? d.pointLabels : null,
        wrong: Array.isArray(d.correct) ? d.correct.filter((x) => !x).length : null,
        data: (d._data || d.data).map((p) => (p && typeof p === 'object' ? [p.x, p.y] : p)),
      })),
    };
  }).filter(Boolean));
}

const series = (chart) => chart.datasets.filter((d) => !d.marker);

/* A chart's series differ without their colours (a colour-blind reader, a
 * greyscale print): no two alike in hatching, or in point style and dash;
 * every bar series has a hatching, drawn. */
function checkNotByColour(list, what) {
  const shapes = list.map((d) => d.shape);
  equal(shapes.filter((x, i) => shapes.indexOf(x) !== i), [], `${what}: series told apart by colour alone (${shapes.join(' ')})`);
  const bars = list.filter((d) => d.type === 'bar');
  check(bars.every((d) => JSON.parse(d.shape)[0] && d.hatched), `${what}: bars without a hatching drawn: ${bars.map((d) => d.label)}`);
}

/* ---- the checks ----------------------------------------------------------- */

/* How the pages write a device record's numa_node (-1 or absent: none). */
const numaText = (n) => (typeof n === 'number' && n >= 0 ? `node ${n}` : '—');

async function checkOverview(page, inv, jobs) {
  await openView(page, '#/', 'overview');
  const rows = await page.$$eval('#devices tbody tr', (trs) => trs.map((tr) => tr.dataset.uuid));
  equal(rows, inv.devices.map((d) => d.uuid), 'device rows');
  const heads = await page.$$eval('#devices thead th', (ths) => ths.map((th) => th.textContent));
  const [pci, numa] = [heads.indexOf('PCI bus id'), heads.indexOf('NUMA')];
  const slots = await page.$$eval('#devices tbody tr', (trs, at) => trs.map((tr) => [tr.cells[at[0]].textContent, tr.cells[at[1]].textContent]), [pci, numa]);
  equal(slots, inv.devices.map((d) => [d.pci_bus_id || '—', numaText(d.numa_node)]), 'device rows: PCI bus id and NUMA node');
  // each device's links to its results are on screen without scrolling the table
  const linksRight = await page.$$eval('#devices tbody td.links', (tds) => tds.map((td) => td.getBoundingClientRect().right));
  const width = await page.evaluate(() => window.innerWidth);
  check(linksRight.length === inv.devices.length && linksRight.every((r) => r <= width), `the results links end at ${linksRight} in a window ${width} px wide`);
  for (let i = 1; i < inv.devices.length; i++) {
    const [a, b] = [inv.devices[i - 1], inv.devices[i]];
    if (!a.attached && !b.attached && a.host === b.host) {
      check((a.pci_bus_id || '') <= (b.pci_bus_id || ''), `host ${a.host}'s GPUs are not listed in PCI bus order: ${a.pci_bus_id} before ${b.pci_bus_id}`);
    }
  }
  if (!inv.devices.some((d) => d.attached)) {
    const text = await page.textContent('#devices-empty');
    check(await page.isVisible('#devices-empty'), 'no note that no GPU is attached');
    check(text.includes(inv.reason), `the note does not give the reason '${inv.reason}': ${text}`);
  }
  for (const id of jobs) {
    const row = page.locator(`tr.job[data-job-id="${id}"]`);
    equal(await row.getAttribute('data-state'), 'succeeded', `job ${id}'s row state`);
    equal((await row.locator('.state').textContent()).trim(), 'succeeded', `job ${id}'s badge`);
    equal((await row.locator('button.toggle').textContent()).trim(), String(id), `job ${id}'s id`);
  }
  const kinds = await page.$$eval('#kind option', (os) => os.map((o) => o.value));
  check(kinds.includes('test') && !kinds.includes('trace-sort'), `kinds offered: ${kinds}`);
  await screenshot(page, 'overview');

  // a job's address opens its row (the new form and the old one)
  for (const hash of [`#/?job=${jobs[0]}`, `#job=${jobs[0]}`]) {
    await openView(page, hash, 'overview', `overview ${hash}`);
    await page.waitForSelector(`#job-detail-${jobs[0]} table.events`, { timeout: TIMEOUT_MS });
    const detail = await page.textContent(`#job-detail-${jobs[0]}`);
    check(detail.includes('"echo": "first"'), `job ${jobs[0]}'s detail lacks its params/result: ${detail.slice(0, 300)}`);
  }
  loadTimes.splice(-2, 2);
}

/* The attempts cell of job ID's row (the column whose head starts with
 * "Attempt"). */
async function attemptsShown(page, id) {
  return page.$eval(`tr.job[data-job-id="${id}"]`, (tr) => {
    const heads = [...document.querySelectorAll('#jobs thead th')].map((th) => th.textContent);
    return tr.cells[heads.findIndex((h) => h.startsWith('Attempt'))].textContent;
  });
}

const attempts = (n) => `${n} attempt${n === 1 ? '' : 's'}`;

/* A job that is done shows the attempts it made, a failed one that it
 * failed for good: never "1/3", which reads as if more were coming. */
async function checkAttempts(page, failedId, succeededId) {
  await openView(page, '#/', 'overview', 'overview (attempts)');
  loadTimes.pop();
  step = 'jobs: attempts of a job that is done';
  const failed = await apiGet(`/api/v1/jobs/${failedId}`);
  equal(failed.state, 'failed', `job ${failedId}'s state`);
  check(failed.attempt < failed.max_attempts, `job ${failedId} failed after ${failed.attempt} of ${failed.max_attempts} attempts: no case of a final failure with attempts left`);
  equal(await attemptsShown(page, failedId), `failed after ${attempts(failed.attempt)}`, `the attempts of failed job ${failedId}`);
  const done = await apiGet(`/api/v1/jobs/${succeededId}`);
  equal(await attemptsShown(page, succeededId), attempts(done.attempt), `the attempts of succeeded job ${succeededId}`);
}

/* The browser runs in this time zone (not the machine's, likely UTC), so
 * that a time shown in it, with its zone, is told from one shown in UTC. */
const ZONE = 'America/New_York';

/* An instant as the dashboard must show it: local time in ZONE and the
 * zone's name (en-US: "EST", "EDT"), worked out here by Intl's own
 * conversion, not the page's. */
function zoned(t) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', {
    timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short',
  }).formatToParts(new Date(t)).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

/* Times in the page's text (and its options') with no zone after them. */
function unzonedTimes(page) {
  return page.evaluate(() => {
    const text = [document.body.innerText, ...[...document.querySelectorAll('option')].map((o) => o.textContent)].join('\n');
    // a clock time, not a piece of a PCI bus id ("0000:00:06.0")
    return text.match(/(?<![\d:])\d\d:\d\d:\d\d(?![\d.:])(?! (UTC|GMT|[A-Z]{2,5}\b))/g) || [];
  });
}

/* Every time is shown with its zone, the same way in every view: the
 * jobs' creation and events, a result's provenance and history, the status
 * line. */
async function checkTimes(page, id, device) {
  await openView(page, `#/?job=${id}`, 'overview', 'overview (times)');
  loadTimes.pop();
  step = 'times: the overview';
  await page.waitForSelector(`#job-detail-${id} table.events`, { timeout: TIMEOUT_MS });
  const job = await apiGet(`/api/v1/jobs/${id}`);
  equal(await page.textContent(`tr.job[data-job-id="${id}"] td[title="${job.created_at}"]`), zoned(job.created_at), `job ${id}'s creation`);
  const events = await page.$$eval(`#job-detail-${id} table.events tbody tr`, (trs) => trs.map((tr) => tr.cells[0].textContent));
  equal(events, job.events.map((e) => zoned(e.at)), `job ${id}'s events`);
  const now = zoned(Date.now()).split(' ')[2];
  check(new RegExp(`^Updated \\d\\d:\\d\\d:\\d\\d ${now}$`).test(await page.textContent('#status')), `the status line: ${await page.textContent('#status')}`);
  equal(await unzonedTimes(page), [], 'times without a zone on the overview');
  if (!device) return;
  await openView(page, `#/device/${device.uuid}/latency`, 'device/latency', 'device/latency (times)');
  loadTimes.pop();
  step = 'times: a result\'s provenance';
  const doc = await apiGet(`/api/v1/devices/${device.uuid}/latency`);
  const provenance = await page.textContent('.provenance');
  check(provenance.includes(`measured ${zoned(doc.measured_at)} ·`), `the provenance: ${provenance} for ${doc.measured_at}`);
  equal(await unzonedTimes(page), [], 'times without a zone on a device\'s page');
}

/* Which jobs' rows are open (their detail shown, their toggle expanded). */
function openJobs(page) {
  return page.$$eval('#jobs tr.job', (trs) => trs.filter((tr) => tr.querySelector('button.toggle').getAttribute('aria-expanded') === 'true' ||
    document.getElementById(`job-detail-${tr.dataset.jobId}`)).map((tr) => Number(tr.dataset.jobId)));
}

/* A job row opened by hand is closed again on a fresh view of the
 * overview (the nav link, another job's link); only the job the address
 * names is open. Navigation inside the page, as a reader's clicks. */
async function checkJobsFresh(page, jobs, device) {
  await openView(page, '#/', 'overview', 'overview (rows closed)');
  loadTimes.pop();
  step = 'jobs: a row opened, then another view';
  await page.click(`tr.job[data-job-id="${jobs[0]}"] button.toggle`);
  await page.waitForSelector(`#job-detail-${jobs[0]} table.events`, { timeout: TIMEOUT_MS });
  await redrawn(page, () => page.evaluate((h) => { window.location.hash = h; }, `#/device/${device}/latency`), 'device/latency');
  step = 'jobs: back to the overview by its link';
  await redrawn(page, () => page.click('#nav a[data-nav="overview"]'), 'overview');
  equal(await openJobs(page), [], 'job rows open on a fresh overview');
  step = 'jobs: another job\'s address';
  await page.click(`tr.job[data-job-id="${jobs[0]}"] button.toggle`);
  await page.waitForSelector(`#job-detail-${jobs[0]} table.events`, { timeout: TIMEOUT_MS });
  await redrawn(page, () => page.evaluate((h) => { window.location.hash = h; }, `#/device/${device}/memory`), 'device/memory');
  await redrawn(page, () => page.evaluate((h) => { window.location.hash = h; }, `#/?job=${jobs[1]}`), 'overview');
  await page.waitForSelector(`#job-detail-${jobs[1]} table.events`, { timeout: TIMEOUT_MS });
  equal(await openJobs(page), [jobs[1]], 'job rows open at the address of one job');
}

async function checkLatency(page, doc) {
  const rows = await page.$$eval('#latency-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  equal(rows.length, doc.entries.length, 'instruction rows');
  equal(rows.map((r) => r[2].replace(' (unverified)', '')), doc.entries.map((e) => e.sass_opcode), 'SASS opcodes in catalog order');
  const safe = doc.entries.map((e) => (e.min_safe_stall ? String(e.min_safe_stall.stall) : '—'));
  const heads = await page.$$eval('#latency-table thead th', (ths) => ths.map((th) => th.textContent));
  const col = (name) => heads.findIndex((h) => h.startsWith(name));
  equal(rows.map((r) => r[col('Safe stall')]), safe, 'smallest safe stalls');
  // a tensor step's TFLOP/s (its median, 4 significant digits), '—' for every other instruction
  const tf = rows.map((r, i) => {
    const want = doc.entries[i].tflops?.median;
    const got = r[col('TFLOP/s')];
    return typeof want === 'number' ? Math.abs(Number(got.replace(/,/g, '')) - want) <= 0.001 * want : got === '—';
  });
  equal(tf.filter((ok) => !ok).length, 0, 'TFLOP/s cells');
  // issue_cycles is clock;op;clock less clock;clock: the cycles one
  // instruction adds between two clock reads (docs/hopper-figures.md,
  // "issue_cycles of 0"), not its issue latency; the column says so
  const titles = await page.$$eval('#latency-table thead th button', (bs) => bs.map((b) => b.title));
  const added = titles.findIndex((t) => t.includes('clock;op;clock'));
  check(added >= 0, `no column says what issue_cycles is (clock;op;clock): ${JSON.stringify(heads)} ${JSON.stringify(titles)}`);
  check(!/issue latency/.test(titles[added].replace('not its issue latency', '')) && !/issue/i.test(heads[added]),
    `the issue_cycles column claims an issue latency: ${heads[added]}: ${titles[added]}`);
  equal(rows.map((r) => r[added]), doc.entries.map((e) => figureText(e.issue_cycles)), 'the issue_cycles column, row by row');
  // exec_cycles: the cycles a step and one dependent use add between two
  // clock reads (clock;op;op;clock less clock;clock, docs/api.md), said in
  // the user's words: no name from the project's own history (no "seed")
  equal(titles.filter((t) => /\bseed\b/i.test(t)), [], 'column titles in words of the project\'s history');
  const pair = titles.findIndex((t) => t.includes('clock;op;op;clock'));
  check(pair >= 0 && /dependent/.test(titles[pair]), `no column says what exec_cycles is (clock;op;op;clock, a dependent use): ${JSON.stringify(titles)}`);
  equal(rows.map((r) => r[pair]), doc.entries.map((e) => figureText(e.exec_cycles)), 'the exec_cycles column, row by row');
  // sorting by latency: ascending, then descending
  const latencies = doc.entries.map((e) => median(e.latency_cycles)).filter((v) => v !== null);
  const head = page.locator('#latency-table th', { hasText: 'Latency' }).locator('button');
  await head.click();
  const up = await page.$$eval('#latency-table tbody tr', (trs) => trs.map((tr) => tr.dataset.name));
  const byName = new Map(doc.entries.map((e) => [e.name, median(e.latency_cycles)]));
  const upVals = up.map((n) => byName.get(n)).filter((v) => v !== null);
  equal(upVals, [...latencies].sort((a, b) => a - b), 'latency column sorted ascending');
  equal(await page.getAttribute('#latency-table th:nth-child(4)', 'aria-sort'), 'ascending', 'aria-sort');
  await head.click();
  const down = await page.$$eval('#latency-table tbody tr', (trs) => trs.map((tr) => tr.dataset.name));
  equal(down.map((n) => byName.get(n)).filter((v) => v !== null), [...latencies].sort((a, b) => b - a), 'latency column sorted descending');
}

/* A definition list's items (dl > div > dt, dd) as {term: text}. */
async function kvText(page, dl) {
  return page.$$eval(`${dl} div`, (ds) =>
    Object.fromEntries(ds.map((d) => [d.querySelector('dt').textContent, d.querySelector('dd').textContent])));
}

function curvePoints(doc, load) {
  const c = doc.curves?.[load];
  return Array.isArray(c) ? c.filter((p) => median(p.cycles) !== null).map((p) => [p.bytes, median(p.cycles)]) : null;
}

function capacities(doc) {
  return ['ca', 'cg'].flatMap((l) => (Array.isArray(doc.levels?.[l]) ? doc.levels[l] : []))
    .filter((lv) => typeof lv.up_to_bytes === 'number').map((lv) => lv.up_to_bytes);
}

async function checkMemory(page, doc) {
  const [chart] = await charts(page, '#result');
  check(chart, 'no memory chart');
  const curves = ['ca', 'cg'].map((l) => curvePoints(doc, l)).filter(Boolean);
  equal(series(chart).map((d) => d.data), curves, 'the .ca and .cg curves, point by point');
  equal(chart.datasets.filter((d) => d.marker).map((d) => d.data[0][0]), capacities(doc), 'cache capacity markers');
  // a curve that failed has no line: the page says so, with the reason
  const failedNotes = await page.$$eval('#result .curve-failed', (ps) => ps.map((p) => [p.dataset.load, p.textContent]));
  const failed = ['ca', 'cg'].filter((l) => doc.curves?.[l] && !Array.isArray(doc.curves[l]));
  equal(failedNotes.map((n) => n[0]), failed, 'a note per failed curve');
  failedNotes.forEach(([l, text]) => check(text.includes(doc.curves[l].error || doc.curves[l]), `the ${l} curve's reason: ${text}`));
  if (failed.length) failedCurveResults++;
  // the curve's last level (no capacity) is its end past the L2, where a
  // chase over data read just before still hits the L2 now and then: not
  // device memory's latency, which device_memory_cycles is (a chase after
  // the L2 was evicted, probes/memory_run.c); the page names both
  const levelRows = await page.$$eval('#memory-levels tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  for (const load of ['ca', 'cg']) {
    const levels = doc.levels?.[load];
    if (!Array.isArray(levels) || !levels.length) continue;
    const last = levels[levels.length - 1];
    if (last.up_to_bytes !== null) continue;
    const row = levelRows.find((r) => r[0].startsWith(`.${load} `) && r[1].startsWith(`${last.level}:`));
    check(row, `no row for .${load} level ${last.level}: ${JSON.stringify(levelRows)}`);
    check(!/device memory/.test(row[1]) && row[1].includes('curve\'s end'), `.${load} level ${last.level} (${row[2]} cycles, the curve's end) is named ${row[1]}`);
  }
  const note = await page.textContent('#memory-levels-note');
  check(note.includes('lower bound') && note.includes('evicted'), `the note on the curve's end and device memory: ${note}`);
  // a figure that failed: "not measured" and why, no unit after it
  const figures = await kvText(page, '#result dl.kv');
  if (doc.shared_cycles?.error) {
    equal(figures['Shared memory'], `not measured (${doc.shared_cycles.error})`, 'a failed shared-memory figure');
    failedFigureResults++;
  }
  await checkDistributedShared(page, doc.distributed_shared);
  await checkAsyncCopies(page, doc.async_copy);
  await checkBlockPlacement(page, doc.block_placement);
  // the L2 partition search, when the result has one
  const kv = await kvText(page, '#result dl.l2-partitions');
  const parts = doc.l2_partitions;
  if (!parts) {
    equal(Object.keys(kv).length, 0, 'no partition rows without a search');
    return;
  }
  partitionResults++;
  check(kv.Verdict?.startsWith(parts.verdict), `the verdict shown: ${kv.Verdict}`);
  if (parts.sms_per_partition) equal(kv['SMs per partition'], parts.sms_per_partition.join(' / '), 'SMs per partition');
  if (parts.home?.mask_bits) equal(kv['Home bits (below 2 MiB)'], parts.home.mask_bits.join(', '), 'home bits');
  if (parts.cycles?.far !== undefined) {
    equal(kv['L2 hit, near / far partition'], `${Math.round(parts.cycles.near)} / ${Math.round(parts.cycles.far)} cycles`, 'near and far cycles');
  }
}
let partitionResults = 0, failedCurveResults = 0, failedFigureResults = 0, placementResults = 0;

/* The block placement: its verdict, the launches dealt alike, the check
 * launch and the first SMs as the result has them; no rows without one. */
async function checkBlockPlacement(page, bp) {
  const kv = await kvText(page, '#result dl.block-placement');
  if (!bp) {
    equal(Object.keys(kv).length, 0, 'no block placement rows without the probe');
    return;
  }
  placementResults++;
  if (bp.error) {
    check(kv['Block placement']?.startsWith(`failed: ${bp.error}`), `the placement error shown: ${kv['Block placement']}`);
    return;
  }
  if (bp.status !== 'determined') {
    check(kv.Verdict?.startsWith(bp.status), `the placement verdict shown: ${kv.Verdict}`);
    return;
  }
  check(kv.Verdict?.startsWith(`determined: ${bp.blocks} blocks`), `the placement verdict shown: ${kv.Verdict}`);
  equal(kv['Launches dealt as the first'], `${bp.same_as_first} of ${bp.launches}, the first included`, 'launches dealt as the first');
  if (bp.check?.predicted != null) {
    check(kv['Check launch']?.startsWith(`${bp.check.predicted} of ${bp.check.blocks} blocks`), `the check launch shown: ${kv['Check launch']}`);
  }
  check(kv['First SMs dealt']?.startsWith(bp.order.slice(0, 16).join(' ')), `the first SMs shown: ${kv['First SMs dealt']}`);
}

/* The distributed-shared-memory table: a row per size asked, its launch
 * and its medians as the result has them. */
async function checkDistributedShared(page, d) {
  const rows = await page.$$eval('#result div.dsmem table tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  if (!d || d.error) {
    equal(rows.length, 0, 'no distributed shared memory rows without sizes');
    return;
  }
  dsmemResults++;
  equal(rows.length, d.sizes.length, 'a row per cluster size');
  d.sizes.forEach((s, i) => {
    const r = rows[i];
    equal(r[0], String(s.asked), `cluster size of row ${i}`);
    check(r[2].startsWith(s.launched ? 'yes' : 'no'), `launched shown for ${s.asked}: ${r[2]}`);
    const near = (cell, v, what) => check(v === undefined || v === null ? cell === '—'
      : Math.abs(Number(cell) - v) <= 1e-3 * Math.abs(v), `${what} of ${s.asked}: ${cell} for ${v}`);
    near(r[3], s.latency_cycles?.local?.median, 'local latency');
    near(r[4], s.latency_cycles?.neighbour?.median, 'neighbour latency');
    near(r[7], s.bytes_per_clk_sm?.remote?.median, 'remote bytes a clock');
  });
}
let dsmemResults = 0;
/* The asynchronous copies (probes/async_copy.h), when the result has them:
 * the bandwidth chart holds every measured point of each method and level,
 * in size order, and the latency table a row per latency point. */
async function checkAsyncCopies(page, ac) {
  const rows = await page.$$eval('#async-latency tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  if (!ac || ac.error) {
    equal(rows.length, 0, 'no async-copy latency rows without the probe');
    return;
  }
  asyncResults++;
  equal(rows.length, ac.latency.length, 'a latency row per point');
  ac.latency.forEach((p, i) => {
    if (p.error) check(rows[i][2].includes(p.error), `latency row ${i} shows its error`);
    else check(Math.abs(Number(rows[i][2].replace(/,/g, '')) - p.cycles.median) < 0.51, `latency row ${i}: ${rows[i][2]} for ${p.cycles.median}`);
    // the size as the compare view's rows name it: the bytes of one copy
    if (typeof p.bytes_per_copy === 'number') check(rows[i][1].startsWith(`${bytesText(p.bytes_per_copy)} a copy`), `latency row ${i}'s size: ${rows[i][1]} for ${p.bytes_per_copy} bytes a copy`);
  });
  // the figure's name, which the compare view's rows must use too
  asyncLatencyName = await page.textContent('#async-latency caption');
  const all = await charts(page, '#result');
  const chart = all.find((c) => c.datasets.some((d) => d.label.startsWith('cp.async') || d.label.startsWith('ld.global')));
  const want = [];
  for (const m of ['ld', 'ca', 'cg', 'bulk', 'tensor']) {
    for (const level of ['dram', 'l2']) {
      const pts = ac.bandwidth.filter((p) => p.method === m && p.level === level && typeof p.bytes_per_clk_per_sm === 'number')
        .map((p) => [p.bytes, p.bytes_per_clk_per_sm]).sort((a, b) => a[0] - b[0]);
      if (pts.length) want.push(pts);
    }
  }
  if (!want.length) return;
  check(chart, 'no async-copy bandwidth chart');
  equal(chart.datasets.map((d) => d.data), want, 'async-copy bandwidth, method by method, point by point');
}
let asyncResults = 0;
let asyncLatencyName = null; // the device view's name of the copies' latency
const bytesText = (b) => (b >= 1024 ? `${b / 1024} KiB` : `${b} B`);

async function checkBanks(page, doc) {
  const cells = await page.$$eval('#bank-map .reg', (rs) => rs.map((r) => r.dataset.bank));
  const untested = (doc.untested_registers || []).map((u) => u.register);
  equal(cells.length, Math.max(doc.map.length, ...untested.map((r) => r + 1)), 'register cells');
  equal(cells.slice(0, doc.map.length).map(Number), doc.map, 'bank of each register');
  doc.classes.forEach((regs, b) => equal(cells.filter((c) => c === String(b)).length, regs.length, `registers of bank ${b}`));
  const [chart] = await charts(page, '#result');
  const costs = Object.values(doc.costs || {});
  equal(chart.datasets.length, 1, 'conflict cost series');
  equal(chart.datasets[0].data, costs.map((c) => median(c.ratio)), 'conflict cost ratios');
  // the reuse cache: one row per question and its rules, or why there is none
  const reuse = await page.$eval('#reuse-cache', (b) => ({
    rows: b.querySelectorAll('tbody tr').length, rules: b.querySelectorAll('#reuse-rules li').length,
  }));
  equal(reuse.rows, doc.reuse_cache?.questions?.length ?? 0, 'reuse-cache questions');
  equal(reuse.rules, doc.reuse_cache?.rules?.length ?? 0, 'reuse-cache rules');
}

async function checkControlCodes(page, doc) {
  const swept = doc.instructions.filter((i) => !i.error && Array.isArray(i.sweep));
  const list = await charts(page, '#sweep-grid');
  equal(list.length, swept.length, 'one sweep chart per instruction');
  list.forEach((chart, k) => {
    const instr = swept[k];
    const s = series(chart);
    equal(s.length, 4, `${instr.name}: series (chain/stream x yield 0/1)`);
    for (const [i, [what, y]] of [['chain', 0], ['chain', 1], ['stream', 0], ['stream', 1]].entries()) {
      const pts = instr.sweep.filter((p) => p.yield === y && median(p[`${what}_cycles`]) !== null);
      equal(s[i].n, pts.length, `${instr.name} ${what} yield ${y}: points`);
      equal(s[i].wrong, pts.filter((p) => p[`${what}_correct`] === false).length, `${instr.name} ${what} yield ${y}: wrong answers marked`);
    }
    const markers = chart.datasets.filter((d) => d.marker).map((d) => d.data[0][0]);
    if (typeof instr.min_safe_stall === 'number') check(markers.includes(instr.min_safe_stall), `${instr.name}: no smallest-safe-stall marker`);
  });
  const by = doc.meanings?.scheduler?.data?.by_experiment;
  const rows = await page.$$eval('#issue-order tbody tr', (trs) => trs.length);
  equal(rows, by ? Object.keys(by).length : 0, 'issue-order table: one row per experiment');
}

async function checkDualIssue(page, doc) {
  const [chart] = await charts(page, '#result');
  const ref = (r) => /^1(-1)+$/.test(r.pattern);
  const cats = new Set(doc.results.filter((r) => !ref(r)).map((r) => `${r.pattern}|${r.operands}`));
  const warps = new Set(doc.results.map((r) => r.warps_per_scheduler));
  const bars = chart.datasets.filter((d) => d.type === 'bar');
  const lines = chart.datasets.filter((d) => d.type === 'line');
  equal(chart.labels, cats.size, 'pattern categories');
  equal(bars.length, warps.size, 'a bar series per warps-per-scheduler count');
  for (const b of bars) equal(b.n, cats.size, `${b.label}: bars`);
  checkNotByColour(bars, 'dual issue');
  equal(lines.length, doc.peak_ffma_per_sm_clock === null ? 1 : 2, 'reference and peak lines');
  const refValue = median(doc.results.find((r) => ref(r) && r.operands === 'conflict_free' && r.warps_per_scheduler === Math.min(...warps))?.ffma_per_sm_clock);
  check(lines[0].data.includes(refValue), `the reference line lacks the single-issue reference ${refValue}`);
  if (doc.peak_ffma_per_sm_clock !== null) check(lines[1].data.every((v) => v === doc.peak_ffma_per_sm_clock), 'the peak line');
}

async function checkValidation(page, doc) {
  const [chart] = await charts(page, '#result');
  const want = doc.kernels.filter((k) => median(k.measured_s) !== null && typeof k.predicted_s === 'number');
  const s = series(chart);
  equal(s.length, want.length, 'a series per predicted kernel');
  equal(s.map((d) => d.data[0]), want.map((k) => [median(k.measured_s), k.predicted_s]), 'measured and predicted times');
  equal(new Set(s.map((d) => d.style)).size, s.length, `kernels drawn alike (colour, point style, dash): ${s.map((d) => d.style).join(' ')}`);
  const rows = await page.$$eval('#result table.data tbody tr', (trs) => trs.length);
  equal(rows, doc.kernels.length, 'kernel rows');
  // the bandwidths the validation measured, as GB/s; "—" for one the result lacks
  const kv = await kvText(page, '#result dl.kv');
  for (const [label, key] of [['DRAM bandwidth', 'dram_bytes_per_s'], ['L2 bandwidth', 'l2_bytes_per_s'], ['Host link bandwidth', 'link_bytes_per_s']]) {
    const m = median(doc.bandwidth?.[key]);
    check(m === null ? kv[label] === '—' || kv[label].startsWith('not measured') : kv[label].endsWith(' GB/s') && kv[label] !== '0 GB/s',
      `${label} shown as '${kv[label]}' for ${JSON.stringify(doc.bandwidth?.[key])}`);
  }
}

const DEVICE_CHECKS = {
  latency: checkLatency,
  memory: checkMemory,
  banks: checkBanks,
  'control-codes': checkControlCodes,
  'dual-issue': checkDualIssue,
  'model-validation': checkValidation,
};

async function checkDevices(page, withResults) {
  for (const [k, { device, docs }] of withResults.entries()) {
    for (const view of VIEWS) {
      await openView(page, `#/device/${device.uuid}/${view}`, `device/${view}`, k === 0 ? `device/${view}` : `device/${view} (${device.name})`);
      await DEVICE_CHECKS[view](page, docs[view]);
      if (k === 0) await screenshot(page, `device-${view}`);
    }
  }
  // a device's tab links keep the device and name the view (on the last page shown)
  step = 'device tabs';
  const first = withResults[withResults.length - 1].device;
  await page.click('nav.tabs a[data-view="memory"]');
  await page.waitForSelector('#view[data-ready="device/memory"]', { timeout: TIMEOUT_MS });
  check(page.url().endsWith(`#/device/${first.uuid}/memory`), `the memory tab went to ${page.url()}`);

  // a run that is not there: the API's 404 detail in place of the result
  allowedErrors = /status of 404/;
  await openView(page, `#/device/${first.uuid}/memory?job=999999`, 'device/memory', 'device/memory (no such run)');
  loadTimes.pop();
  const problem = await fetch(`${BASE}/api/v1/devices/${first.uuid}/memory?job=999999`).then((r) => r.json());
  const shown = await page.textContent('#result .missing');
  check(shown.includes(problem.detail), `the missing result shows '${shown}', not the API's detail '${problem.detail}'`);
  allowedErrors = null;
}

async function checkCompare(page, withResults) {
  const n = withResults.length;
  await openView(page, '#/compare/memory', 'compare/memory');
  let [chart] = await charts(page, '#result');
  const curves = withResults.flatMap((w) => ['ca', 'cg'].map((l) => curvePoints(w.docs.memory, l)).filter(Boolean));
  equal(series(chart).map((d) => d.data), curves, `every device's memory curves on one chart (${n} devices)`);
  checkNotByColour(series(chart), 'compare memory');
  equal(chart.datasets.filter((d) => d.marker).length, withResults.reduce((a, w) => a + capacities(w.docs.memory).length, 0), 'every device\'s capacity markers');
  for (const w of withResults) check(series(chart).some((d) => d.label.startsWith(w.device.name)), `no curve labelled ${w.device.name}`);
  // each device's levels (the last one the curve's end, not device memory)
  // and its device-memory figure, from a chase after the L2 was evicted
  const levels = await page.$$eval('#compare-levels tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.innerText)));
  equal(levels.length, n, 'a row of cache levels per device');
  withResults.forEach((w, i) => {
    const dm = w.docs.memory.device_memory_cycles || {};
    check(!/device memory/.test(levels[i][1] + levels[i][2]), `${w.device.name}: the curve's end is named device memory: ${levels[i].join(' | ')}`);
    equal(levels[i][3], `${figureText(dm.ca)} / ${figureText(dm.cg)} cyc`, `${w.device.name}: device memory, caches evicted`);
  });
  await checkSideBySide(page, 'compare-l2-partitions', withResults, (w) => w.docs.memory.l2_partitions, expectL2Partitions);
  await checkSideBySide(page, 'compare-block-placement', withResults, (w) => w.docs.memory.block_placement, expectBlockPlacement);
  await checkSideBySide(page, 'compare-dsmem', withResults, (w) => w.docs.memory.distributed_shared, expectDsmem);
  await checkSideBySide(page, 'compare-async-copy', withResults, (w) => w.docs.memory.async_copy, expectAsyncCopy);
  await screenshot(page, 'compare-memory');

  // one device by its address
  await openView(page, `#/compare/memory?devices=${withResults[0].device.uuid}`, 'compare/memory', 'compare/memory (one device)');
  [chart] = await charts(page, '#result');
  equal(series(chart).length, ['ca', 'cg'].map((l) => curvePoints(withResults[0].docs.memory, l)).filter(Boolean).length, 'curves of the one device asked for');
  loadTimes.pop();

  for (const [view, ready] of [['latency', 'compare/latency'], ['dual-issue', 'compare/dual-issue'], ['model-validation', 'compare/model-validation']]) {
    await openView(page, `#/compare/${view}`, ready);
    [chart] = await charts(page, '#result');
    const per = series(chart).filter((d) => d.type !== 'line' || view === 'model-validation');
    equal(per.length, n, `${view}: a series per device`);
    checkNotByColour(per, `compare ${view}`);
    if (view === 'latency') {
      const names = new Set(withResults.flatMap((w) => w.docs.latency.entries.map((e) => e.name)));
      for (const d of per) equal(d.n, names.size, 'a bar per instruction any device has');
      await checkCompareTensor(page, withResults);
    }
    if (view === 'model-validation') {
      per.forEach((d, i) => equal(d.n, withResults[i].docs['model-validation'].kernels.filter((k) => typeof k.predicted_s === 'number').length, `${d.label}: kernels`));
    }
    await screenshot(page, `compare-${view}`);
  }

  // the issue-order rule (control codes) and the reuse cache (banks) side by side
  await openView(page, '#/compare/control-codes', 'compare/control-codes');
  await checkSideBySide(page, 'compare-issue-order', withResults, (w) => w.docs['control-codes'].meanings?.scheduler, expectIssueOrder);
  await checkSideBySide(page, 'compare-reuse-cache', withResults, (w) => w.docs.banks.reuse_cache, expectReuseCache);
  await screenshot(page, 'compare-control-codes');
}

/* ---- the compare view's side-by-side tables ---------------------------------- */

/* A side-by-side table (web/js/compare_tables.js) as the page shows it: its
 * column heads and, per row label, each device's cell text and list items. */
function sideTable(page, id) {
  return page.$eval(`#${id}`, (t) => (t.tagName !== 'TABLE' ? { none: t.textContent } : {
    heads: [...t.querySelectorAll('thead th')].map((th) => th.textContent),
    rows: [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((c) => ({
      text: c.textContent, items: [...c.querySelectorAll('li')].map((li) => li.textContent),
    }))),
  }));
}

/* A number shown with 4 significant digits (or rounded) against the
 * document's figure. */
const close = (text, want) => typeof want === 'number' && Math.abs(Number(String(text).replace(/,/g, '')) - want) <= Math.max(1e-3 * Math.abs(want), 0.51e-3);

let sideValueColumns = 0;   // device columns held to their document's member
let sidePlaceholders = 0;   // device columns of a device without the member

/* Each device's column of table `id` against member(w) of that device's
 * document as the API served it: a device without the member shows "not
 * measured" in every row; one with it, through expect(member, cell(label)),
 * exactly its own figures (cell answers that column's text for a label and
 * fails on a label the table lacks). */
async function checkSideBySide(page, id, withResults, member, expect) {
  const t = await sideTable(page, id).catch(() => null);
  check(t, `${id}: neither a side-by-side table nor a note`);
  if (withResults.every((w) => !member(w))) {
    check(t.none?.includes('not measured on any'), `${id}: a table although no device has the member`);
    return;
  }
  check(!t.none, `${id}: no side-by-side table: ${t.none}`);
  equal(t.heads, ['', ...withResults.map((w) => w.device.name)], `${id}: a column per device`);
  const labels = t.rows.map((r) => r[0].text);
  equal(new Set(labels).size, labels.length, `${id}: each label once`);
  withResults.forEach((w, i) => {
    const m = member(w);
    const col = t.rows.map((r) => r[i + 1]);
    if (!m) {
      equal(col.map((c) => c.text), labels.map(() => 'not measured'), `${id}: ${w.device.name} has no such member`);
      sidePlaceholders++;
      return;
    }
    const cell = (label) => {
      const k = labels.indexOf(label);
      check(k >= 0, `${id}: no row '${label}' (rows: ${labels.join(' | ')})`);
      return col[k];
    };
    const what = `${id}, ${w.device.name}`;
    const shown = expect(m, cell, what);
    // every cell of the column is one of its own facts or "—"
    equal(col.filter((c) => c.text !== '—').length, shown, `${what}: cells with a value`);
    sideValueColumns++;
  });
}

/* The expectations answer how many cells of the device's column they
 * checked: the test fails when the column holds a value they did not. */
function expectBlockPlacement(bp, cell, what) {
  if (bp.error) {
    check(cell('Block placement').text.includes(bp.error), `${what}: the probe's error`);
    return 1;
  }
  if (bp.status !== 'determined') {
    check(cell('Verdict').text.startsWith(bp.status), `${what}: verdict ${cell('Verdict').text}`);
    return 1;
  }
  check(cell('Verdict').text.startsWith(`determined: ${bp.blocks} blocks`), `${what}: verdict ${cell('Verdict').text}`);
  equal(cell('Launches dealt as the first').text, `${bp.same_as_first} of ${bp.launches}, the first included`, `${what}: launches`);
  check(cell('First SMs dealt').text.startsWith(bp.order.slice(0, 16).join(' ')), `${what}: first SMs ${cell('First SMs dealt').text}`);
  check(/^\d+ \(\d+x\)/.test(cell('Blocks apart on one SM (commonest)').text), `${what}: gaps ${cell('Blocks apart on one SM (commonest)').text}`);
  let n = 4;
  if (bp.check?.predicted != null) {
    n++;
    check(cell('Check launch').text.startsWith(`${bp.check.predicted} of ${bp.check.blocks} blocks`), `${what}: check ${cell('Check launch').text}`);
  }
  return n;
}
function expectL2Partitions(p, cell, what) {
  if (p.error) {
    check(cell('Partition search').text.includes(p.error), `${what}: the search's error`);
    return 1;
  }
  let n = 1;
  check(cell('Verdict').text.startsWith(p.verdict), `${what}: verdict ${cell('Verdict').text}`);
  if (p.sms_per_partition) { n++; equal(cell('SMs per partition').text, p.sms_per_partition.join(' / '), `${what}: SMs per partition`); }
  const c = p.cycles || {};
  const pair = (label, a, b) => {
    n++;
    const [x, y] = cell(label).text.replace(/ cycles.*$/, '').split(' / ');
    check(Number(x) === Math.round(a) && Number(y) === Math.round(b), `${what}: ${label} ${cell(label).text} for ${a} / ${b}`);
  };
  if (c.far !== undefined) pair('L2 hit, near / far partition', c.near, c.far);
  if (c.far_second_read !== undefined) {
    n++;
    check(cell('Far line read again').text.startsWith(`${Math.round(c.far_second_read)} cycles`), `${what}: second read`);
    equal(cell('Far line read again').text.includes('kept a copy'), Boolean(p.copies_kept), `${what}: copies kept`);
  }
  if (c.memory_home_far !== undefined) pair('Miss homed near / far', c.memory_home_near, c.memory_home_far);
  if (p.home?.granule_bytes) {
    n++;
    const [v, unit] = cell('Home granule').text.split(' ');
    equal(Number(v) * { B: 1, KiB: 1024, MiB: 1 << 20 }[unit], p.home.granule_bytes, `${what}: home granule`);
  }
  if (Array.isArray(p.home?.mask_bits)) { n++; equal(cell('Home bits (below 2 MiB)').text, p.home.mask_bits.join(', '), `${what}: home bits`); }
  return n;
}

function expectDsmem(d, cell, what) {
  if (d.error) {
    check(cell('Distributed shared memory').text.includes(d.error), `${what}: the probe's error`);
    return 1;
  }
  let n = 0;
  for (const s of d.sizes) {
    const lat = cell(`Cluster of ${s.asked}: latency local / neighbour / farthest`).text;
    n++;
    if (!s.launched) {
      check(lat.startsWith('not launched') && lat.includes(s.error), `${what}: size ${s.asked} did not launch: ${lat}`);
      continue;
    }
    const l = s.latency_cycles || {};
    lat.replace(/ cycles$/, '').split(' / ').forEach((v, k) => {
      const want = median([l.local, l.neighbour, l.farthest][k]);
      check(want === null ? v === '—' : close(v, want), `${what}: size ${s.asked} latency ${k}: ${v} for ${want}`);
    });
    const bw = cell(`Cluster of ${s.asked}: B/clk/SM local / remote`).text;
    n++;
    bw.split(' / ').forEach((v, k) => {
      const want = median([s.bytes_per_clk_sm?.local, s.bytes_per_clk_sm?.remote][k]);
      check(want === null ? v === '—' : close(v, want), `${what}: size ${s.asked} bandwidth ${k}: ${v} for ${want}`);
    });
  }
  return n;
}

const ASYNC_METHOD_LABELS = { ld: 'ld.global + st.shared', ca: 'cp.async.ca', cg: 'cp.async.cg', bulk: 'cp.async.bulk', tensor: 'cp.async.bulk.tensor' };
const ASYNC_LEVEL_LABELS = { dram: 'from device memory', l2: 'from the L2' };

/* The probe's summary: each method's best bandwidth per level (the size
 * and the ratio to plain loads), the one-copy latency at each shared size. */
function expectAsyncCopy(ac, cell, what) {
  if (ac.error) {
    check(cell('Asynchronous copies').text.includes(ac.error), `${what}: the probe's error`);
    return 1;
  }
  if (!ac.summary) {
    equal(cell('Summary').text, 'none in this result', `${what}: no summary`);
    return 1;
  }
  let n = 0;
  for (const level of Object.keys(ASYNC_LEVEL_LABELS)) {
    for (const [m, b] of Object.entries(ac.summary[level] || {})) {
      const text = cell(`Best B/clk/SM, ${ASYNC_METHOD_LABELS[m]}, ${ASYNC_LEVEL_LABELS[level]}`).text;
      const [best, rest] = text.split(' at ');
      check(close(best, b.best), `${what}: best of ${m} ${level}: ${text} for ${b.best}`);
      check(rest.startsWith(bytesText(b.at_bytes)), `${what}: size of ${m}'s best from ${level}: ${text} for ${b.at_bytes}`);
      const vs = /\((.*) × ld\)$/.exec(rest);
      check(m !== 'ld' && typeof b.vs_ld === 'number' ? vs && Number(vs[1]) === Number(b.vs_ld.toPrecision(3)) : !vs, `${what}: ${m} against ld: ${text} for ${b.vs_ld}`);
      n++;
    }
  }
  for (const [size, per] of Object.entries(ac.summary.latency_by_bytes || {})) {
    for (const [m, v] of Object.entries(per)) {
      // one figure, one name: the device view's, with the size as its rows give it
      const text = cell(`${asyncLatencyName}, ${bytesText(Number(size))} a copy, ${ASYNC_METHOD_LABELS[m]}`).text;
      check(close(text, v), `${what}: latency of ${m} at ${size} B: ${text} for ${v}`);
      n++;
    }
  }
  return n;
}

function expectIssueOrder(sched, cell, what) {
  equal(cell('Issue order after a stall or yield').text, sched.rule || 'not determined', `${what}: the rule`);
  const greedy = cell('Greedy (the issue stays with a warp that has work)').text;
  equal(greedy, typeof sched.greedy === 'boolean' ? (sched.greedy ? 'yes' : 'no') : '—', `${what}: greedy`);
  let n = typeof sched.greedy === 'boolean' ? 2 : 1;
  for (const [name, c] of Object.entries(sched.data?.by_experiment || {})) {
    equal(cell(`${name}: rule`).text, Array.isArray(c.rule) ? c.rule.join(' or ') : 'not determined', `${what}: ${name}'s rule`);
    const hits = ['youngest', 'oldest', 'round-robin', 'lowest-id'].map((p) => (c.decisions ? `${c.hits?.[p] ?? 0} / ${c.decisions}` : '—'));
    equal(cell(`${name}: youngest / oldest / round-robin / lowest id`).text, hits.join(' · '), `${what}: ${name}'s hits`);
    n += 2;
  }
  return n;
}

function expectReuseCache(rc, cell, what) {
  if (rc.not_run) {
    check(cell('Reuse cache').text.includes(rc.not_run), `${what}: why not run`);
    return 1;
  }
  equal(cell('Rules').items, rc.rules, `${what}: the rules`);
  equal(cell('Questions determined').text, `${rc.determined} of ${rc.questions.length}`, `${what}: questions determined`);
  equal(cell('Cache design').text, rc.answer ?? '—', `${what}: the cache design`);
  for (const q of rc.questions) {
    const text = cell(q.asks).text;
    const m = /^(.+) \((\S+) of (\S+) conflicts a period\)$/.exec(text);
    check(m && m[1] === q.outcome && Math.abs(Number(m[2]) - q.conflicts) <= 0.01 * Math.max(1, Math.abs(q.conflicts)) + 0.005
      && m[3] === String(q.cleared_conflicts),
      `${what}: '${q.asks}': ${text} for ${q.outcome}, ${q.conflicts} of ${q.cleared_conflicts}`);
  }
  return 3 + rc.questions.length;
}

/* The compare latency table's tensor-core columns: each device's TFLOP/s
 * (and one-warpgroup rate) beside its throughput, "—" where that device
 * lacks the step or the step has no such figure. */
async function checkCompareTensor(page, withResults) {
  const members = [['tflops', 'TFLOP/s'], ['throughput_one_warpgroup_per_clock_per_sm', '1 warpgroup /clk/SM']];
  const t = await page.$eval('#compare-latency-table', (tb) => ({
    heads: [...tb.querySelectorAll('thead th')].map((th) => th.textContent),
    rows: [...tb.querySelectorAll('tbody tr')].map((tr) => ({ name: tr.dataset.name, cells: [...tr.cells].map((c) => c.textContent) })),
  }));
  for (const [member, head] of members) {
    const any = withResults.some((w) => w.docs.latency.entries.some((e) => e[member]));
    for (const w of withResults) {
      const k = t.heads.indexOf(`${w.device.name}: ${head}`);
      if (!any) {
        equal(k, -1, `compare latency: no ${head} column without tensor figures`);
        continue;
      }
      check(k >= 0, `compare latency: no column '${w.device.name}: ${head}' (heads: ${t.heads.join(' | ')})`);
      if (member === 'tflops') check(t.heads[k - 1] === `${w.device.name}: /clk/SM`, `${head} is not beside ${w.device.name}'s throughput`);
      for (const r of t.rows) {
        const want = median(w.docs.latency.entries.find((e) => e.name === r.name)?.[member]);
        check(want === null ? r.cells[k] === '—' : close(r.cells[k], want), `compare latency: ${w.device.name}'s ${head} of ${r.name}: ${r.cells[k]} for ${want}`);
      }
    }
  }
}

async function occupancyShown(page) {
  return {
    blocks_per_sm: Number(await page.textContent('#occ-blocks')),
    active_warps: Number(await page.textContent('#occ-warps')),
    limiter: await page.textContent('#occ-limiter'),
    occupancy: await page.textContent('#occ-occupancy'),
    limiterRow: await page.$eval('#occ-limits tr.limiter td', (td) => td.textContent),
  };
}

function occupancyExpected(a) {
  return {
    blocks_per_sm: a.blocks_per_sm,
    active_warps: a.active_warps,
    limiter: a.limiter.replace(/_/g, ' '),
    occupancy: `${(a.occupancy * 100).toFixed(1)} %`,
    limiterRow: a.limiter.replace(/_/g, ' '),
  };
}

async function checkOccupancy(page, inv) {
  await openView(page, '#/occupancy?cc=9.0&block=256&regs=32&smem=0', 'occupancy', 'occupancy (answer and curves)');
  let api = await apiPost('/api/v1/model/occupancy', { compute_capability: '9.0', block: 256, regs: 32, smem: 0, curves: true });
  equal(api.status, 200, 'POST occupancy');
  equal(await occupancyShown(page), occupancyExpected(api.body), 'the calculator\'s answer (cc 9.0, 256 threads, 32 registers)');
  let list = await charts(page, '#occ-curves-section');
  equal(list.length, 3, 'occupancy curves');
  equal(list.map((c) => c.datasets[0].n), [api.body.rules.max_threads_per_block / api.body.rules.warp_size, api.body.rules.max_registers_per_thread, 49152 / api.body.rules.shared_allocation_unit + 1], 'points of the block, register and shared-memory curves');
  const apiCurves = ['block', 'regs', 'smem'].map((k) => api.body.curves[k].x.map((x, i) => [x, api.body.curves[k].active_warps[i]]));
  equal(list.map((c) => c.datasets[0].data), apiCurves, 'the three curves, point by point, as the API gives them');
  const atRegs = list[1].datasets[0].data.find((p) => p[0] === 32);
  equal(atRegs[1], api.body.active_warps, 'the register curve at this launch');
  await screenshot(page, 'occupancy');

  // the form, with a device: the answer equals the API's
  step = 'occupancy form';
  const target = inv.devices.length ? `device:${inv.devices[0].uuid}` : 'cc:8.6';
  const body = inv.devices.length ? { device: inv.devices[0].uuid } : { compute_capability: '8.6' };
  Object.assign(body, { block: 128, regs: 64, smem: 20000 });
  const before = Number(await page.$eval('#view', (v) => v.dataset.readyCount));
  await page.selectOption('#occ-target', target);
  await page.fill('#occ-block', '128');
  await page.fill('#occ-regs', '64');
  await page.fill('#occ-smem', '20000');
  await page.click('#occ-form button[type="submit"]');
  await page.waitForFunction((n) => Number(document.getElementById('view').dataset.readyCount) > n, before, { timeout: TIMEOUT_MS });
  api = await apiPost('/api/v1/model/occupancy', body);
  equal(await occupancyShown(page), occupancyExpected(api.body), `the calculator's answer for ${JSON.stringify(body)}`);
  check(page.url().includes('block=128') && page.url().includes('regs=64'), `the address does not keep the inputs: ${page.url()}`);
  list = await charts(page, '#occ-curves-section');
  equal(list[0].datasets[1].data[0], [128, api.body.active_warps], 'this launch on the block curve');

  // a kernel that opted in to more dynamic shared memory than 48 KiB (Hopper's
  // 100 KB blocks): refused without the opt-in, calculated with it, as the API
  step = 'occupancy opt-in';
  for (const optin of [null, 100000]) {
    const want = { compute_capability: '9.0', block: 256, regs: 32, smem: 100000 };
    if (optin) want.max_dynamic_smem = optin;
    await openView(page, `#/occupancy?cc=9.0&block=256&regs=32&smem=100000${optin ? `&optin=${optin}` : ''}`, 'occupancy', `occupancy opt-in ${optin || 'none'}`);
    api = await apiPost('/api/v1/model/occupancy', want);
    equal(api.status, 200, `POST occupancy ${JSON.stringify(want)}`);
    equal(Boolean(api.body.refused), !optin, `the API refuses a 100000-byte block ${optin ? 'with' : 'without'} the opt-in`);
    equal(await page.$('#occ-refused') !== null, !optin, `the page refuses it ${optin ? 'with' : 'without'} the opt-in`);
    if (optin) equal(await occupancyShown(page), occupancyExpected(api.body), 'the calculator\'s answer with the opt-in');
  }
}

/* The API's sorted trace and summary for FILE: the 200 answer, or for a 202
 * the job's output once it has succeeded. */
async function apiSort(file, query) {
  const r = await fetch(`${BASE}/api/v1/traces/sort?${query}`, {
    method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` }, body: fs.readFileSync(file),
  });
  if (r.status === 200) {
    return { sync: true, body: Buffer.from(await r.arrayBuffer()), summary: JSON.parse(r.headers.get('gpuprobe-summary')) };
  }
  equal(r.status, 202, `the API's sort of ${path.basename(file)}`);
  const job = await waitJob((await r.json()).id, ['succeeded']);
  const out = await fetch(`${BASE}/api/v1/jobs/${job.id}/output`);
  equal(out.status, 200, 'the sorted trace of the job');
  const { sms, ...summary } = job.result;
  return { sync: false, body: Buffer.from(await out.arrayBuffer()), summary };
}

/* Sorts FILE from the page with SMS SMs and holds the summary, the per-SM
 * table and chart and the download to the API's answer for the same file. */
async function sortFromPage(page, name, sms) {
  const file = path.join(FIXTURES, name);
  const want = await apiSort(file, `sms=${sms}`);
  step = `traces: ${name} (${want.sync ? 'answered at once' : 'a job'})`;
  await page.evaluate(() => { document.getElementById('trace-summary-section').hidden = true; });
  await page.setInputFiles('#trace-file', file);
  await page.fill('#trace-sms', String(sms));
  const t0 = Date.now();
  await page.click('#trace-form button[type="submit"]');
  await page.waitForSelector('#trace-summary-section:not([hidden]) #trace-per-sm tbody tr', { timeout: TIMEOUT_MS });
  loadTimes.push({ view: `traces: sort ${name} (${want.sync ? '200' : '202, job'})`, ms: Date.now() - t0 });
  const totals = await page.textContent('#trace-totals');
  check(totals.includes(`Records in${want.summary.records_in}`), `totals: ${totals}`);
  check(totals.includes(`Requests out${want.summary.requests_out}`), `totals: ${totals}`);
  equal(await page.$$eval('#trace-per-sm tbody tr', (trs) => trs.length), sms, 'per-SM rows');
  const [chart] = await charts(page, '#trace-summary-section');
  equal(chart.datasets.map((d) => d.n), [sms, sms], 'per-SM chart');
  checkNotByColour(chart.datasets, 'per-SM chart');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#trace-download')]);
  const got = fs.readFileSync(await download.path());
  check(got.equals(want.body), `the download (${got.length} bytes) differs from the API's sorted trace (${want.body.length} bytes)`);
  return want.sync;
}

async function checkTraces(page) {
  await openView(page, '#/traces', 'traces');
  await page.fill('#token', TOKEN);
  // t_web.sh's trace_sync_limit answers the small CSV at once and makes the
  // Accel-Sim trace a job: both ways of the API are shown
  const syncs = [await sortFromPage(page, 'sample.csv', 2), await sortFromPage(page, 'kernel-1.trace', 4)];
  if (process.env.GPUPROBE_WEB_BOTH_SORTS === '1') equal(syncs, [true, false], 'sorts answered at once, by a job');
  await screenshot(page, 'traces');
}

async function checkSubmitCancel(page) {
  await openView(page, '#/', 'overview', 'overview (submit)');
  loadTimes.pop();
  step = 'submit from the page';
  await page.fill('#token', TOKEN);
  await page.selectOption('#kind', 'test');
  await page.fill('#params', JSON.stringify({ mode: 'sleep', seconds: 60, echo: 'from the page' }));
  await page.click('#submit button[type="submit"]');
  await page.waitForSelector('#submit-result:not([hidden])', { timeout: TIMEOUT_MS });
  const text = await page.textContent('#submit-result');
  const m = /^Job (\d+) submitted/.exec(text);
  check(m, `submission answered: ${text}`);
  const id = Number(m[1]);
  const job = await apiGet(`/api/v1/jobs/${id}`);
  equal([job.kind, job.params.echo], ['test', 'from the page'], 'the job the page submitted');

  step = 'cancel from the page';
  await page.waitForSelector(`tr.job[data-job-id="${id}"][data-state="running"]`, { timeout: TIMEOUT_MS });
  const running = await apiGet(`/api/v1/jobs/${id}`);
  equal(await attemptsShown(page, id), `${running.attempt} of ${running.max_attempts}`, 'the attempts of a running job');
  await page.click(`tr.job[data-job-id="${id}"] button.toggle`);
  // by keyboard: the focus must stay on "Cancel job" while the running
  // job's duration ticks (the row is not rebuilt for that)
  const cancel = `#job-detail-${id} button.cancel`;
  await page.focus(cancel);
  await page.$eval(cancel, (b) => { b.dataset.focusedByTest = '1'; });
  const live = `tr.job[data-job-id="${id}"] td.live`;
  const soFar = await page.textContent(live);
  await page.waitForFunction(([sel, text]) => document.querySelector(sel)?.textContent !== text, [live, soFar], { timeout: TIMEOUT_MS });
  check(await page.$eval(live, (td) => td.textContent.endsWith('…')), 'the running job\'s duration');
  equal(await page.evaluate(() => document.activeElement?.dataset?.focusedByTest || null), '1', 'the focus on "Cancel job" after the duration ticked');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`tr.job[data-job-id="${id}"][data-state="cancelled"]`, { timeout: TIMEOUT_MS });
  equal((await waitJob(id, ['cancelled'])).state, 'cancelled', 'the job after cancelling from the page');

  step = 'a bad token';
  const count = (await apiGet('/api/v1/jobs?limit=500')).jobs.length;
  await page.fill('#token', 'not-the-token');
  allowedErrors = /status of 403/;
  await page.fill('#params', JSON.stringify({ mode: 'ok' }));
  await page.click('#submit button[type="submit"]');
  await page.waitForFunction(() => /^403 /.test(document.getElementById('submit-result').textContent), null, { timeout: TIMEOUT_MS });
  const shown = await page.textContent('#submit-result');
  check(/Forbidden/.test(shown) && (await page.getAttribute('#submit-result', 'class')).includes('bad'), `the bad token's error: ${shown}`);
  allowedErrors = null;
  equal((await apiGet('/api/v1/jobs?limit=500')).jobs.length, count, 'jobs after a refused submission');
  await page.fill('#token', TOKEN);
}

/* The result bundle round trip, once the API has it: export a device from its
 * page, import the file from the overview. */
async function checkExportImport(page, withResults, openapi) {
  const paths = Object.keys(openapi.paths || {});
  if (!paths.includes('/api/v1/devices/{uuid}/export') || !paths.includes('/api/v1/import')) {
    console.log('SKIP export/import: the API has no /api/v1/devices/{uuid}/export and /api/v1/import yet');
    return;
  }
  const d = withResults[0].device;
  await openView(page, `#/device/${d.uuid}/latency`, 'device/latency', 'device (export)');
  loadTimes.pop();
  step = 'export';
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('a.button.subtle[download]')]);
  const file = await download.path();
  check(fs.statSync(file).size > 0, 'an empty bundle');
  await openView(page, '#/', 'overview', 'overview (import)');
  loadTimes.pop();
  step = 'import';
  await page.fill('#token', TOKEN);
  await page.setInputFiles('#import-file', file);
  await page.click('#import button[type="submit"]');
  await page.waitForSelector('#import-result:not([hidden])', { timeout: TIMEOUT_MS });
  const text = await page.textContent('#import-result');
  check(text.startsWith('Imported'), `import answered: ${text}`);
}

/* ---- the status line and the title ----------------------------------------------- */

/* A view that has answered says so on the status line (never the page's
 * first "Loading…"), and the title names the page shown. */
async function checkStatusLines(page) {
  const status = () => page.textContent('#status');
  allowedErrors = /status of 404/;
  await openView(page, '#/device/GPU-nope/latency', 'device/latency', 'an unknown device');
  loadTimes.pop();
  step = 'status: an unknown device';
  check(await page.isVisible('text=Unknown device'), 'the unknown device is not named as such');
  check(/^Updated /.test(await status()), `the status line: ${await status()}`);
  allowedErrors = null;

  step = 'title: an unknown address, from another view';
  await page.evaluate(() => { window.location.hash = '#/nonsense'; });
  await page.waitForSelector('#view[data-ready="unknown"]', { timeout: TIMEOUT_MS });
  equal(await page.title(), 'gpuprobe · No such page', 'the title');

  // the compare view of a database without devices: the API's own answer, its list emptied
  const inv = await apiGet('/api/v1/devices');
  await page.route(/\/api\/v1\/devices$/, (route) => route.fulfill({ json: { ...inv, devices: [] } }));
  try {
    await openView(page, '#/compare/memory', 'compare/memory', 'compare (no devices)');
    loadTimes.pop();
    step = 'status: compare without devices';
    const text = await page.textContent('#result');
    check(!text.includes('Choose at least one device') && text.includes('No device'), `the compare view without devices: ${text}`);
    check(/^Updated /.test(await status()), `the status line: ${await status()}`);
  } finally {
    await page.unroute(/\/api\/v1\/devices$/);
  }
}

/* ---- the kernel-time predictor ----------------------------------------------------- */

/* sgemv of the model validation, launched as the validation kind launches it
 * (probes/validation_ptx.c: 8192 rows, 8 a block, a warp a row): its loop's
 * trip count needs the kernel parameter p_n. */
const PREDICT_PTX = path.join(__dirname, '..', 'fixtures', 'ptx', 'capture', 'validation_sgemv.ptx');
const SGEMV = { grid: 1024, block: [32, 8], regs: 20, params: { p_n: 8192 } };
/* Per-warp counts for the device without measurements: its refusal does
 * not depend on the kernel. */
const COUNTS = { fp32: 100, int: 10, coalesced: 2 };

const predictApi = (device, kernel) => apiPost('/api/v1/model/predict', { device, kernel });

/* A bundle's canonical text (docs/bundles.md: keys sorted, no white space),
 * which its sha256 covers; enough for strings and integers. */
const canonical = (v) => (Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
  : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
    : JSON.stringify(v));

/* Imports a GPU with no results (as a bundle exported before its first
 * probe would carry it): a device the store knows that the predictor has no
 * parameters for. Answers its UUID. */
async function importUnmeasured() {
  const uuid = 'GPU-00000000-0000-4000-8000-00unmeasured';
  // a long name and host (a cluster's FQDN), as the device list offers them
  const info = { uuid, name: 'Unmeasured NVIDIA H100 80GB HBM3', compute_capability: '9.0', sm_count: 132, warp_size: 32 };
  const bundle = {
    format: 'gpuprobe-bundle', version: 1, exported_at: new Date().toISOString(), exported_by: 'dashboard.test.js',
    devices: [{ uuid, name: info.name, compute_capability: info.compute_capability, host: 'gpu-node-17.unmeasured.cluster.example.org', info, results: [] }],
  };
  bundle.sha256 = crypto.createHash('sha256').update(canonical(bundle)).digest('hex');
  const r = await fetch(`${BASE}/api/v1/import`, {
    method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(bundle),
  });
  equal(r.status, 200, `importing a device without results (${await r.text()})`);
  return uuid;
}

/* Fills the predictor's form with sgemv (PTX pasted unless a file is
 * uploaded) or with COUNTS, and its launch. */
async function fillSgemv(page, ptx) {
  await page.check('input[name="pr-source"][value="ptx"]');
  if (ptx !== null) await page.fill('#pr-ptx', ptx);
  await page.fill('#pr-grid', '1024');
  await page.fill('#pr-block', '32, 8');
  await page.fill('#pr-regs', '20');
  await page.fill('#pr-params', 'p_n=8192');
}

async function fillCounts(page) {
  await page.check('input[name="pr-source"][value="per_warp"]');
  for (const [k, v] of Object.entries(COUNTS)) await page.fill(`#pr-per-warp-${k}`, String(v));
  await page.fill('#pr-grid', '1024');
  await page.fill('#pr-block', '256');
  await page.fill('#pr-regs', '32');
}

/* Submits the predictor's form and waits until the page has drawn the answer
 * (or the refusal). */
async function predictSubmit(page) {
  await redrawn(page, () => page.click('#pr-form button[type="submit"]'), 'predict');
}

/* The refusal the predictor shows: its text, the field it names and its
 * link to the device's page (null where there is none). */
function refusalShown(page) {
  return page.evaluate(() => {
    const box = document.getElementById('pr-error');
    return {
      text: box && !box.hidden ? box.textContent : '',
      field: document.getElementById('pr-error-field')?.textContent ?? null,
      link: box?.querySelector('a.device-link')?.getAttribute('href') ?? null,
    };
  });
}

/* What sticks out of a page at the window's width: the pixels the page is
 * wider than the window and its outermost elements past the edge. */
function overflow(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const sticking = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 0.5 &&
      !e.closest('.scroll') && e.parentElement.getBoundingClientRect().right <= width + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}`);
    return { wider: document.documentElement.scrollWidth - width, sticking };
  });
}

/* The predictor's answer as the page shows it against the API's for the
 * same request: the time, every intermediate of the prediction (a row each,
 * its number), every parameter with the job that measured it (a link to
 * the job) and its source, the counts derived from the PTX, the chart of a
 * repetition's candidates. */
async function checkPrediction(page, want) {
  const total = await page.$eval('#pr-total', (e) => ({ seconds: Number(e.dataset.seconds), text: e.textContent }));
  equal(total.seconds, want.prediction.total_s, 'the predicted time');
  check(/^[\d.]+(e[-+]\d+)? (s|ms|µs)$/.test(total.text), `the predicted time as text: ${total.text}`);
  const rows = await page.$$eval('#pr-breakdown tr[data-key]', (trs) => trs.map((tr) => ({
    key: tr.dataset.key, value: tr.dataset.value, unit: tr.dataset.unit, text: tr.cells[1].textContent,
  })));
  equal(rows.map((r) => r.key).sort(), Object.keys(want.prediction).sort(), 'a row for every intermediate of the prediction');
  for (const r of rows) {
    const v = want.prediction[r.key];
    equal(r.value, String(v), `the value of ${r.key}`);
    // plain numbers and cycles as 4 significant digits (other units are scaled)
    if (typeof v === 'number' && ['', 'cycles', 'warps'].includes(r.unit)) {
      check(Math.abs(parseFloat(r.text) - v) <= 1e-3 * Math.abs(v), `${r.key}: ${r.text} for ${v}`);
    }
  }
  const params = await cells(page, '#pr-parameters tbody tr');
  equal(params.map((p) => p.name), Object.keys(want.parameters), 'a row for every parameter');
  for (const p of params) {
    const w = want.parameters[p.name];
    equal(p.links, typeof w.job_id === 'number' ? [`#/?job=${w.job_id}`] : [], `the job link of ${p.name}`);
    check(p.text.join(' ').includes(w.source), `${p.name}'s source: ${p.text.join(' | ')}`);
  }
  check(params.some((p) => p.links.length), 'no parameter links to the job that measured it');
  const counts = await page.$$eval('#pr-counts tr[data-count]', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.count, Number(tr.cells[1].textContent.replace(/,/g, ''))])));
  equal(counts, (want.kernel.description || want.kernel).per_warp, 'the per-warp counts the prediction used');
  const [chart] = await charts(page, '#pr-result');
  check(chart, 'no chart of a repetition\'s formula and floors');
  equal(chart.datasets[0].data, ['case_cycles_per_rep', 'floor_departure', 'floor_dram', 'floor_l2'].map((k) => want.prediction[k]), 'the chart of a repetition\'s formula and floors');
  checkNotByColour(chart.datasets, 'the predictor\'s chart');
}

/* #/predict: reached from a device's page; a PTX file uploaded with its
 * launch and parameter predicts as the API does; an empty PTX shows the
 * server's reason and marks the field; a device without measurements shows
 * the 409 naming the probe to run, with a link to the device's page; at
 * 390 px nothing scrolls the page sideways. */
async function checkPredict(page, device, openapi) {
  const ptx = fs.readFileSync(PREDICT_PTX, 'utf8');
  const want = await predictApi(device.uuid, { ...SGEMV, ptx });
  equal(want.status, 200, `POST predict (sgemv on ${device.name})`);

  await openView(page, `#/device/${device.uuid}/latency`, 'device/latency', 'device/latency (predict link)');
  loadTimes.pop();
  step = 'predict: the device page\'s link';
  const href = `#/predict?device=${device.uuid}`;
  equal(await page.evaluate(() => document.getElementById('predict-link')?.getAttribute('href') ?? null), href, 'the link to the predictor');
  await redrawn(page, () => page.click('#predict-link'), 'predict');
  equal(await page.inputValue('#pr-device'), device.uuid, 'the device the link chose');

  await openView(page, href, 'predict');
  step = 'predict: a PTX file';
  equal(await page.inputValue('#pr-device'), device.uuid, 'the device the address chose');
  await page.check('input[name="pr-source"][value="ptx"]');
  await page.setInputFiles('#pr-ptx-file', PREDICT_PTX);
  await page.waitForFunction((n) => document.getElementById('pr-ptx').value.length === n, ptx.length, { timeout: TIMEOUT_MS });
  await fillSgemv(page, null);
  await predictSubmit(page);
  check(await page.isHidden('#pr-error'), `an error beside the answer: ${await page.textContent('#pr-error')}`);
  await checkPrediction(page, want.body);
  check(page.url().endsWith(href), `the address does not name the device: ${page.url()}`);
  await screenshot(page, 'predict');

  // what the form and the API's document say of the PTX's inputs, as
  // model/predict.c takes them: static shared memory left out is what the
  // PTX's .shared declarations hold (not 0), and a parameter is named by
  // its .param name or its index from 0, an unknown or repeated one refused
  step = 'predict: static shared memory and parameters, as the server takes them';
  const placeholder = await page.getAttribute('#pr-static-smem', 'placeholder');
  check(/\.shared/.test(placeholder || ''), `the static shared memory's placeholder does not say it comes from the PTX's .shared declarations: ${placeholder}`);
  const paramsHint = await page.$eval('#pr-params', (i) => i.parentElement.textContent);
  check(/index/.test(paramsHint), `the parameters' hint does not say a parameter goes by its index too: ${paramsHint}`);
  const kd = openapi.components.schemas.KernelDescription.properties;
  check(kd.static_smem.default === undefined && /\.shared/.test(kd.static_smem.description || ''),
    `openapi.json's static_smem: ${JSON.stringify(kd.static_smem)}`);
  check(/index/.test(kd.params.description || '') && /refuse/.test(kd.params.description || ''),
    `openapi.json's params does not say it takes an index from 0 and refuses unknown or repeated ones: ${JSON.stringify(kd.params)}`);
  const byIndex = await predictApi(device.uuid, { ...SGEMV, params: { 3: 8192 }, ptx });
  equal(byIndex.status, 200, 'POST predict with p_n by its index, 3');
  equal(byIndex.body.prediction.total_s, want.body.prediction.total_s, 'the prediction with p_n by its index');
  await page.fill('#pr-params', '3=8192');
  await predictSubmit(page);
  check(await page.isHidden('#pr-error'), `p_n by its index from the page: ${await page.textContent('#pr-error')}`);
  await checkPrediction(page, byIndex.body);

  step = 'predict: an empty PTX';
  allowedErrors = /status of 400/;
  const bad = await predictApi(device.uuid, { ...SGEMV, ptx: '' });
  equal(bad.status, 400, 'POST predict with an empty PTX');
  await page.fill('#pr-ptx', '');
  await predictSubmit(page);
  const shown = await refusalShown(page);
  check(shown.text.includes(bad.body.detail), `the server's reason: ${shown.text}`);
  check((shown.field || '').includes(bad.body.field), `the field named: ${shown.field}`);
  equal(await page.getAttribute('#pr-ptx', 'aria-invalid'), 'true', 'the PTX field marked');
  check(await page.isHidden('#pr-result'), 'the previous answer still shown beside the refusal');
  allowedErrors = null;

  step = 'predict: importing a device without measurements';
  const unmeasured = await importUnmeasured();
  {
    const refused = await predictApi(unmeasured, { grid: 1024, block: 256, regs: 32, per_warp: COUNTS });
    equal(refused.status, 409, 'POST predict on the device without measurements');
    allowedErrors = /status of 409/;
    await openView(page, `#/predict?device=${unmeasured}`, 'predict', 'predict (no measurements)');
    loadTimes.pop();
    step = 'predict: a device without measurements';
    await fillCounts(page);
    await predictSubmit(page);
    const shown409 = await refusalShown(page);
    check(shown409.text.includes(refused.body.detail), `the 409's detail: ${shown409.text}`);
    const kind = /"kind":"([\w-]+)"/.exec(refused.body.detail)[1];
    equal(shown409.link, `#/device/${unmeasured}/${kind}`, 'the link to the device\'s page for the probe');
    allowedErrors = null;
  }

  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await openView(page, href, 'predict', 'predict (390 px)');
    loadTimes.pop();
    step = 'predict: at 390 px, an answer';
    await fillSgemv(page, ptx);
    await predictSubmit(page);
    check(await page.isVisible('#pr-result'), 'the answer at 390 px');
    let o = await overflow(page);
    equal(o.wider, 0, `pixels the predictor is wider than the screen (${o.sticking.join(', ')} stick out)`);
    await screenshot(page, 'predict-narrow');
    // the per-warp counts' fields, the long device name, the 409's long detail
    allowedErrors = /status of 409/;
    await openView(page, `#/predict?device=${unmeasured}`, 'predict', 'predict (390 px, no measurements)');
    loadTimes.pop();
    step = 'predict: at 390 px, a refusal';
    await fillCounts(page);
    await predictSubmit(page);
    check((await refusalShown(page)).link, 'the 409 at 390 px');
    o = await overflow(page);
    equal(o.wider, 0, `pixels the predictor's refusal is wider than the screen (${o.sticking.join(', ')} stick out)`);
    allowedErrors = null;
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
}

/* ---- a phone's width ------------------------------------------------------------ */

/* At 390 px: every view link is on screen, the page does not scroll
 * sideways (wide tables scroll in their own box) and no chart's x tick
 * labels overprint each other. */
async function checkNarrow(page, device) {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await openView(page, `#/device/${device.uuid}/memory`, 'device/memory', 'device/memory (390 px)');
    loadTimes.pop();
    step = 'narrow: device/memory at 390 px';
    const shown = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = `${Chart.defaults.font.size}px ${Chart.defaults.font.family}`;
      const overprinted = [];
      for (const c of document.querySelectorAll('#result canvas')) {
        const x = Chart.getChart(c)?.scales.x;
        if (!x) continue;
        const boxes = x.ticks.map((t) => {
          const at = x.getPixelForValue(t.value);
          const w = ctx.measureText(String(t.label)).width;
          return [at - w / 2, at + w / 2, t.label];
        });
        for (let i = 1; i < boxes.length; i++) {
          if (boxes[i][0] < boxes[i - 1][1]) overprinted.push(`${c.getAttribute('aria-label')}: ${boxes[i - 1][2]} and ${boxes[i][2]}`);
        }
      }
      // the outermost elements that stick out, not inside a box that scrolls
      const sticking = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 0.5 &&
        !e.closest('.scroll') && e.parentElement.getBoundingClientRect().right <= width + 0.5)
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''}`);
      return {
        wider: document.documentElement.scrollWidth - width,
        sticking,
        offscreen: [...document.querySelectorAll('#nav a')].filter((a) => a.getBoundingClientRect().right > width).map((a) => a.textContent),
        overprinted,
      };
    });
    equal(shown.offscreen, [], 'view links off the screen');
    equal(shown.wider, 0, `pixels the page is wider than the screen (${shown.sticking.join(', ')} stick out)`);
    equal(shown.overprinted, [], 'x tick labels that overprint each other');
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
}

/* At 390 px the jobs table fits the screen, with a job's detail open: no
 * sideways scrolling of the page, of the table's box, of the table or of
 * anything in it, and each job's id and state still on screen. */
async function checkNarrowJobs(page, id) {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await openView(page, `#/?job=${id}`, 'overview', 'overview (390 px)');
    loadTimes.pop();
    step = 'narrow: the jobs table at 390 px';
    await page.waitForSelector(`#job-detail-${id} table.events`, { timeout: TIMEOUT_MS });
    const shown = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const table = document.getElementById('jobs');
      // a box the reader would scroll (not one clipped out of sight, as the table's hidden heads)
      const wide = (e) => e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
      const name = (e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''}`;
      return {
        table: [table.scrollWidth, table.clientWidth],
        box: [table.parentElement.scrollWidth, table.parentElement.clientWidth],
        page: document.documentElement.scrollWidth - width,
        right: table.getBoundingClientRect().right - width,
        scrolling: [...table.querySelectorAll('*')].filter(wide).map((e) => `${name(e)} (${e.scrollWidth} px in ${e.clientWidth}: ${[...e.children].map((c) => `${name(c)} ${c.scrollWidth}`).join(', ')})`),
        offscreen: [...table.querySelectorAll('tr.job button.toggle, tr.job .state')]
          .filter((e) => e.getBoundingClientRect().right > width || e.getBoundingClientRect().width === 0).map(name),
      };
    });
    check(shown.table[0] <= shown.table[1], `the jobs table scrolls sideways: ${shown.table[0]} px of content in ${shown.table[1]}`);
    check(shown.box[0] <= shown.box[1], `the jobs table's box scrolls sideways: ${shown.box[0]} px of content in ${shown.box[1]}`);
    equal(shown.page, 0, 'pixels the overview is wider than the screen');
    check(shown.right <= 0, `the jobs table ends ${shown.right} px past the screen`);
    equal(shown.scrolling, [], 'elements of the jobs table that scroll sideways');
    equal(shown.offscreen, [], 'job ids and states off the screen');
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
}

/* ---- the daemon unreachable ------------------------------------------------------ */

/* The page's requests to the API fail as they do when the daemon is down
 * ("Failed to fetch"), until offline(page, false). */
const BLOCKED = /\/api\//;
const FAILED_LOADS = /Failed to load resource|ERR_FAILED/;

async function offline(page, on) {
  if (on) {
    allowedErrors = FAILED_LOADS;
    await page.route(BLOCKED, (route) => route.abort('failed'));
  } else {
    await page.unroute(BLOCKED);
    allowedErrors = null;
  }
}

/* Navigates in the page (a hash change, as a link does) and waits until the
 * view has either drawn its data or given up; answers which. */
async function navigateTo(page, hash) {
  await page.evaluate((h) => { window.location.hash = h; }, hash);
  await page.waitForFunction(() => {
    const v = document.getElementById('view');
    return Boolean(v.dataset.ready || v.dataset.failed);
  }, null, { timeout: TIMEOUT_MS });
  return page.$eval('#view', (v) => ({ ready: v.dataset.ready || '', failed: v.dataset.failed || '' }));
}

/* With the daemon unreachable, a view that needs its data shows the failure
 * in place of the previous view, and is not marked as loaded. */
async function checkUnreachable(page, device) {
  await openView(page, '#/traces', 'traces', 'traces (before the daemon goes away)');
  loadTimes.pop();
  equal(await navigateTo(page, `#/device/${device.uuid}/latency`), { ready: 'device/latency', failed: '' }, 'the device view before the daemon goes away');
  await offline(page, true);
  try {
    // views that answer in place: the status line says the daemon is out of reach, not "Updated"
    step = 'unreachable: #/occupancy';
    await page.evaluate(() => { window.location.hash = '#/occupancy'; });
    await page.waitForSelector('#occ-error', { timeout: TIMEOUT_MS });
    const status = () => page.$eval('#status', (s) => [s.classList.contains('bad'), s.textContent]);
    check((await status())[0], `the status line after the calculator failed: ${(await status())[1]}`);
    step = 'unreachable: #/traces';
    const traces = await navigateTo(page, '#/traces');
    check(traces.failed === 'traces' && (await status())[0], `the trace page, its settings known from before: ${JSON.stringify(traces)}, ${(await status())[1]}`);
    for (const [hash, name] of [['#/compare/memory', 'compare/memory'], ['#/fleet', 'fleet'], [`#/device/${device.uuid}/memory`, 'device/memory']]) {
      step = `unreachable: ${hash}`;
      equal(await navigateTo(page, hash), { ready: '', failed: name }, 'the view marked as failed, not loaded');
      const shown = await page.$eval('#view', (v) => ({ children: v.children.length, alert: v.querySelector('[role="alert"]')?.textContent || '' }));
      equal(shown.children, 1, 'what the view shows besides the failure');
      check(shown.alert.startsWith('Cannot reach the daemon'), `the failure shown: ${shown.alert}`);
    }
  } finally {
    await offline(page, false);
  }
}

/* The overview opened while the daemon is down: the status line says so
 * once, the Kind list fails; when the daemon is back the next refresh fills
 * the list (the API's kinds, internal ones left out) and clears the error. */
async function checkOverviewOutage(page) {
  step = 'overview: the daemon down';
  await page.goto('about:blank');
  await offline(page, true);
  try {
    await page.goto(`${BASE}/#/`);
    await page.waitForFunction(() => /Could not load job kinds/.test(document.getElementById('submit-result').textContent) &&
      document.getElementById('status').classList.contains('bad'), null, { timeout: TIMEOUT_MS });
    const status = await page.textContent('#status');
    equal(status.split('Cannot reach the daemon').length - 1, 1, `the status line '${status}' names the failure`);
  } finally {
    await offline(page, false);
  }
  step = 'overview: the daemon back';
  const kinds = (await apiGet('/api/v1/job-kinds')).kinds.filter((k) => !k.internal).map((k) => k.name);
  await page.waitForFunction((n) => document.querySelectorAll('#kind option').length === n, kinds.length, { timeout: TIMEOUT_MS });
  equal(await page.$$eval('#kind option', (os) => os.map((o) => o.value)), kinds, 'the kinds offered once the daemon is back');
  check(await page.isHidden('#submit-result'), `the stale error stays: ${await page.textContent('#submit-result')}`);
  check(/^Updated /.test(await page.textContent('#status')), `the status line: ${await page.textContent('#status')}`);
}

/* ---- the fleet ---------------------------------------------------------------- */

const cells = (page, rows) => page.$$eval(rows, (trs) => trs.map((tr) => ({
  name: tr.dataset.name || null,
  text: [...tr.cells].map((c) => c.textContent),
  warn: [...tr.cells].map((c) => Boolean(c.querySelector('.warn'))),
  links: [...tr.querySelectorAll('a')].map((a) => a.getAttribute('href')),
})));

const modelSection = (model) => `section.fleet-model[data-model=${JSON.stringify(model)}]`;

const relativeText = (o) => (typeof o.relative === 'number' ? `${o.relative > 0 ? '+' : ''}${(o.relative * 100).toFixed(1)} %` : '—');

/* The host the shipped reference data comes in under (docs/reference-data.md). */
const REF = 'reference';

/* A GPU's driver as the fleet page writes it (null: none of its results
 * names one), and a model's drivers: each with its GPU count, most first. */
const driverText = (v) => v ?? 'unknown';
const driversText = (m) => m.drivers.map((x) => `${driverText(x.driver_version)} × ${x.devices}`).join(', ');
/* A model's known drivers: unknown (null, a node older than the field) is
 * no driver of its own, so it never makes a split. */
const knownDrivers = (m) => m.drivers.filter((x) => x.driver_version !== null);
const driverSplit = (m) => knownDrivers(m).length > 1;
let driverSplits = 0; // models seen split over drivers
let unknownBesideOne = 0; // models seen with one known driver and GPUs of unknown driver, not flagged

/* The fleet page against GET /api/v1/fleet (QUERY: its filters): the rule,
 * the models' counts, each model's outliers row by row, the figures, the
 * devices and their outlier counts. */
async function checkFleetShown(page, query) {
  const fleet = await apiGet(`/api/v1/fleet${query}`);
  const whole = query ? await apiGet('/api/v1/fleet') : fleet;
  // the shipped reference data (host "reference") is no host: a model's
  // hosts are the API's less that one, whatever the filter
  const refGpus = (m) => whole.devices.filter((d) => d.model === m.model && d.host === REF).length;
  const nodeHosts = (m) => m.hosts - (refGpus(m) ? 1 : 0);
  const rule = await page.textContent('#fleet-rule');
  check(rule.includes(fleet.rule.text), `the rule's text is not the API's: ${rule}`);
  for (const v of [`${fleet.rule.k} robust sigmas`, String(fleet.rule.mad_scale), `${Math.round(fleet.rule.min_relative * 100)} %`, `${fleet.rule.min_devices} GPUs`]) {
    check(rule.includes(v), `the rule lacks ${v}: ${rule}`);
  }
  const models = await cells(page, '#fleet-models tbody tr');
  // the reference data is no node: not a host in the models table or a
  // model's line, not a node in the nodes' heading, and its GPUs' column
  // head names models (every such slip listed at once)
  const wrong = [];
  for (const [i, m] of fleet.models.entries()) {
    if (Number(models[i]?.text[3]) !== nodeHosts(m)) wrong.push(`${m.model}: ${models[i]?.text[3]} hosts in the models table, not ${nodeHosts(m)}`);
    const line = await page.$eval(`${modelSection(m.model)} > p.hint`, (p) => p.textContent);
    const on = /on (\d+) hosts?\b/.exec(line);
    if ((on ? Number(on[1]) : 0) !== nodeHosts(m) || (!on && nodeHosts(m)) || line.includes('reference data') !== refGpus(m) > 0) {
      wrong.push(`${m.model}: ${nodeHosts(m)} hosts and ${refGpus(m)} GPUs of the reference data, but its line reads: ${line}`);
    }
  }
  wrong.push(...await fleetNodesHeads(page, fleet, whole));
  equal(wrong, [], 'the reference data counted as a node or host');
  equal(models.map((r) => [r.text[0], ...[2, 4, 5, 6].map((i) => Number(r.text[i]))]),
    fleet.models.map((m) => [m.model, m.devices, m.devices_with_outliers, m.outliers.length, m.figures.length]),
    'models: GPUs, GPUs with outliers, outliers, figures');
  // each model's drivers (GET /api/v1/fleet's drivers), flagged where its
  // GPUs run more than one: a driver change can move figures
  // GPUs of unknown driver are listed, but are no second driver: a model
  // whose other GPUs all run one driver is not flagged
  equal(models.map((r) => [r.text[7], r.warn[7]]), fleet.models.map((m) => [driversText(m), driverSplit(m)]), 'models: drivers, a split (of known drivers) flagged');
  for (const m of fleet.models) {
    const split = await page.$$eval(`${modelSection(m.model)} .driver-split`, (ps) => ps.map((p) => p.textContent));
    equal(split.length, driverSplit(m) ? 1 : 0, `${m.model}: the warning of a model split over drivers (${driversText(m)})`);
    const unknown = m.drivers.find((x) => x.driver_version === null);
    if (split.length) {
      driverSplits++;
      const known = knownDrivers(m);
      check(split[0].includes(`run ${known.length} drivers: `), `${m.model}: the split's warning counts other than its ${known.length} known drivers: ${split[0]}`);
      for (const x of known) check(split[0].includes(`${x.driver_version} on ${x.devices} GPU`), `${m.model}: the split's warning lacks ${x.driver_version}: ${split[0]}`);
      if (unknown) check(split[0].includes(`unknown on ${unknown.devices} GPU`), `${m.model}: the split's warning lacks the GPUs of unknown driver: ${split[0]}`);
    } else if (unknown && knownDrivers(m).length === 1) {
      unknownBesideOne++;
    }
  }
  for (const m of fleet.models) {
    if (m.devices < fleet.rule.min_devices) {
      // too few GPUs for the rule: the page says so, and claims no agreement
      const text = await page.textContent(modelSection(m.model));
      check(text.includes(`Only ${m.devices} GPU`) && !text.includes('No outlier'), `${m.model}, ${m.devices} of ${fleet.rule.min_devices} GPUs: ${text.slice(0, 400)}`);
    }
    const rows = await cells(page, `${modelSection(m.model)} table.sortable:not([id]) tbody tr`);
    const outliers = rows.slice(0, m.outliers.length);
    equal(outliers.map((r) => [r.name, r.text[1], r.text[2], r.text[3], r.text[6], r.text[7], r.text[8]]),
      m.outliers.map((o) => [o.uuid, o.host, driverText(o.driver_version), o.metric, typeof o.deviation_mads === 'number' ? String(Number(o.deviation_mads.toPrecision(3))) : '—', relativeText(o), `job ${o.job_id}`]),
      `${m.model}: the outliers (device, host, driver, figure, robust sigmas, relative, job)`);
    for (const [i, r] of outliers.entries()) {
      const o = m.outliers[i];
      check(r.links[0].startsWith(`#/device/${o.uuid}/`) && r.links[0].endsWith(`?job=${o.job_id}`), `${o.uuid} ${o.metric}: the device link ${r.links[0]}`);
      const q = new URLSearchParams(r.links[1].split('?')[1]);
      equal([r.links[1].split('?')[0], q.get('model'), q.get('metric'), q.get('device')], ['#/fleet/distribution', m.model, o.metric, o.uuid], `${o.uuid} ${o.metric}: the distribution link`);
      equal(r.links[2], `#/?job=${o.job_id}`, `${o.uuid} ${o.metric}: the job link`);
    }
    const figures = rows.slice(m.outliers.length);
    equal(figures.map((r) => r.name), m.figures.map((f) => f.metric), `${m.model}: the figures, in the API's order`);
    equal(figures.map((r) => [Number(r.text[1]), Number(r.text[6])]), m.figures.map((f) => [f.n, f.outliers]), `${m.model}: each figure's n and outliers`);
  }
  const devices = await cells(page, '#fleet-devices tbody tr');
  equal(devices.map((r) => [r.name, r.text[1], r.text[2], r.text[3], Number(r.text[5])]), fleet.devices.map((d) => [d.uuid, d.host, d.model, driverText(d.driver_version), d.outliers]), 'devices: host, model, driver, outliers');
  equal(devices.map((r) => r.warn[5]), fleet.devices.map((d) => d.outliers > 0), 'devices with outliers highlighted');
  await checkFleetNodes(page, fleet);
  return fleet;
}

const NODE_ROWS = '#fleet-nodes tbody tr[data-host], #fleet-reference tbody tr[data-host]';

/* What is wrong with the nodes' heading and column heads: the heading counts
 * the nodes (the reference data is none: "No nodes yet" when it is alone in
 * the whole fleet, WHOLE: GET /api/v1/fleet unfiltered),
 * and the head above a row's GPUs says what the row shows of them, a node's
 * bus ids and NUMA nodes, the reference data's models. */
async function fleetNodesHeads(page, fleet, whole) {
  const shown = await page.$$eval(NODE_ROWS, (trs) => ({
    heading: trs[0]?.closest('section')?.querySelector('h2')?.textContent ?? null,
    heads: trs.map((tr) => [tr.dataset.host, tr.closest('table').tHead.rows[0].cells[2].textContent]),
  }));
  const nodeCount = new Set(fleet.devices.map((d) => d.host).filter((h) => h !== REF)).size;
  const hasRef = fleet.devices.some((d) => d.host === REF);
  const wrong = [];
  if (fleet.devices.length) {
    const heading = shown.heading || '';
    const anyNode = whole.devices.some((d) => d.host !== REF);
    if (nodeCount ? heading !== `Nodes (${nodeCount})${hasRef ? ' and the reference data' : ''}`
      : anyNode ? heading !== 'The reference data' : !/^No nodes yet\b/.test(heading) || !heading.includes('reference data')) {
      wrong.push(`the heading of ${nodeCount} nodes${hasRef ? ' and the reference data' : ''}: ${heading}`);
    }
  }
  for (const [host, head] of shown.heads) {
    if (host === REF ? !/model/i.test(head) || /PCI|slot/.test(head) : !/PCI bus id \(NUMA node\)/.test(head)) {
      wrong.push(`the head above ${host}'s GPUs: ${head}`);
    }
  }
  return wrong;
}

/* The fleet page's nodes: one row per host of the fleet shown, its GPUs side
 * by side in PCI bus order, each with the bus id and NUMA node its device
 * record (GET /api/v1/devices) gives and the warning colour when it is an
 * outlier somewhere. The shipped reference data (host "reference", the API's
 * mark of it: docs/reference-data.md) is no node: its GPUs were measured on
 * different machines, so its row comes last, says so, and shows each GPU's
 * model, no slot or NUMA node (their records' bus ids, alike, would read as
 * two GPUs in one slot). */
async function checkFleetNodes(page, fleet) {
  const nodes = await page.$$eval(NODE_ROWS, (trs) => trs.map((tr) => ({
    host: tr.dataset.host,
    head: tr.cells[0].textContent,
    n: Number(tr.cells[1].textContent),
    gpus: [...tr.querySelectorAll('a')].map((a) => [a.dataset.uuid, a.textContent, a.classList.contains('warn')]),
  })));
  const records = new Map((await apiGet('/api/v1/devices')).devices.map((d) => [d.uuid, d]));
  const hosts = [...new Set(fleet.devices.map((d) => d.host))].filter((h) => h !== REF).sort();
  if (fleet.devices.some((d) => d.host === REF)) hosts.push(REF);
  const bus = (d) => records.get(d.uuid)?.pci_bus_id || '';
  equal(nodes, hosts.map((host) => {
    const ref = host === REF;
    const gpus = fleet.devices.filter((d) => d.host === host)
      .sort((a, b) => (ref ? a.model.localeCompare(b.model) : bus(a).localeCompare(bus(b))) || a.uuid.localeCompare(b.uuid));
    return {
      host,
      head: ref ? 'reference data' : host,
      n: gpus.length,
      gpus: gpus.map((d) => [d.uuid, ref ? d.model : `${bus(d) || '—'} (${numaText(records.get(d.uuid)?.numa_node)})`, d.outliers > 0]),
    };
  }), 'nodes: each host with its GPUs in PCI bus order, bus id and NUMA node; the reference data last, by model');
  for (const node of nodes.filter((x) => x.host !== REF)) {
    const ids = node.gpus.map((g) => g[1].split(' ')[0]);
    check(ids.every((id) => /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/.test(id)), `${node.host}: a GPU without a well-formed PCI bus id: ${ids}`);
  }
  if (hosts.includes(REF)) {
    const note = await page.textContent('#fleet-nodes-reference');
    check(note.includes('different machines') && note.includes('docs/reference-data.md'), `the note on the reference data: ${note}`);
  }
}

/* Waits until the view has been drawn again after an action. */
async function redrawn(page, action, ready) {
  const before = Number(await page.$eval('#view', (v) => v.dataset.readyCount));
  await action();
  await page.waitForFunction(([n, name]) => Number(document.getElementById('view').dataset.readyCount) > n &&
    document.getElementById('view').dataset.ready === name, [before, ready], { timeout: TIMEOUT_MS });
}

/* A distribution's chart against GET /api/v1/fleet/distribution: every
 * value a point (or, for a category, every GPU in a bar), the outliers, the
 * bounds, the marked device. */
async function checkDistribution(page, model, metric, device) {
  const dist = await apiGet(`/api/v1/fleet/distribution?${new URLSearchParams({ model, metric })}`);
  const [chart] = await charts(page, '#fleet-dist');
  check(chart, 'no distribution chart');
  const mine = dist.values.find((v) => v.uuid === device);
  check(mine, `${device} has no value of ${metric}`);
  const marked = chart.datasets.filter((d) => d.device);
  equal(marked.map((d) => d.device), [device], 'the marked device');
  check(marked[0].pointLabels.some((t) => t && t.includes(device) && t.includes(mine.host)), `the marked device is not labelled: ${marked[0].pointLabels}`);
  const shown = await page.textContent('#fleet-marked');
  check(shown.includes(device) && shown.includes(mine.host), `the marked line: ${shown}`);
  if (dist.categorical) {
    equal(chart.type, 'bar', `${metric}: a bar chart`);
    const texts = [...new Set(dist.values.map((v) => v.text))];
    equal(chart.labels, texts.length, `${metric}: a bar per value`);
    const bars = chart.datasets[0].data;
    equal(bars.reduce((a, b) => a + b, 0), dist.n, `${metric}: every GPU in a bar`);
    equal(bars[texts.indexOf(dist.mode)], dist.mode_devices, `${metric}: the norm's bar`);
    equal(bars[texts.indexOf(mine.text)] > 0, true, `${metric}: the marked device's bar`);
    return dist;
  }
  const points = chart.datasets.filter((d) => !d.marker && !d.device);
  equal(points.flatMap((d) => d.data).map((p) => p[1]).sort((a, b) => a - b), dist.values.map((v) => v.value), `${metric}: a point per value`);
  equal(points.find((d) => d.label === 'outlier').n, dist.values.filter((v) => v.outlier).length, `${metric}: the outliers`);
  const lines = chart.datasets.filter((d) => d.marker).map((d) => d.data[0][1]);
  /* bounds are null where too few GPUs are compared: no lines for them */
  for (const y of [dist.low, dist.high, dist.median].filter((v) => v !== null)) check(lines.includes(y), `${metric}: no line at ${y} (lines ${lines})`);
  equal(marked[0].data.map((p) => p[1]), [mine.value], 'the marked device\'s value');
  return dist;
}

/* Pushes every bundle fleet-synth wrote in DIR. */
async function pushFleet(dir) {
  step = `pushing the fleet in ${dir}`;
  const files = fs.readdirSync(dir).filter((f) => /^\d+\.json$/.test(f)).sort();
  check(files.length > 0, 'no bundles');
  for (const f of files) {
    const r = await fetch(`${BASE}/api/v1/import`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      body: fs.readFileSync(path.join(dir, f)),
    });
    equal(r.status, 200, `importing ${f}`);
  }
  return files.length;
}

/* Every device the API lists, however many share a name (a fleet's GPUs of
 * one model), has a label of its own where the pages offer them all: the
 * device page's switcher and the compare view's picker. */
async function checkDeviceNames(page) {
  const devices = (await apiGet('/api/v1/devices')).devices;
  const first = devices[0].uuid;
  allowedErrors = /status of 404/; // a fleet GPU without this result
  for (const [hash, ready, options] of [[`#/device/${first}/latency`, 'device/latency', '#device-switch option'],
    [`#/compare/memory?devices=${first}`, 'compare/memory', '#compare-devices label']]) {
    await openView(page, hash, ready, `${ready} (device names)`);
    loadTimes.pop();
    step = `device names: ${hash}`;
    const labels = await page.$$eval(options, (os) => os.map((o) => o.textContent.trim()));
    equal(labels.length, devices.length, 'a label per device');
    const twice = labels.filter((l, i) => labels.indexOf(l) !== i);
    equal(twice, [], 'labels shown more than once');
  }
  allowedErrors = null;
}

async function checkFleet(page) {
  // before the fleet: the reference data is no fleet, and the page says what to do
  await openView(page, '#/fleet', 'fleet', 'fleet (reference data only)');
  let fleet = await checkFleetShown(page, '');
  await screenshot(page, 'fleet-reference');
  if (!fleet.models.some((m) => m.devices >= fleet.rule.min_devices)) {
    const text = await page.textContent('#fleet-empty');
    check(text.includes('/api/v1/import') && text.includes('docs/fleet.md'), `what to do without a fleet: ${text}`);
  }
  if (FLEET) {
    const t0 = Date.now();
    const n = await pushFleet(FLEET);
    console.log(`pushed ${n} bundles of a synthetic fleet in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  await checkDeviceNames(page);
  await openView(page, '#/fleet', 'fleet');
  fleet = await checkFleetShown(page, '');
  await screenshot(page, 'fleet');
  if (process.env.GPUPROBE_WEB_DRIVER_SPLIT === '1') {
    check(driverSplits > 0, 'no model was seen split over drivers: the fleet pushed has no GPU on another driver');
  }
  if (process.env.GPUPROBE_WEB_DRIVER_UNKNOWN === '1') {
    check(unknownBesideOne > 0, 'no model was seen with GPUs of unknown driver beside one known driver: the fleet pushed has no figures-only GPU');
  }
  const m = fleet.models.find((x) => x.outliers.some((o) => typeof o.value === 'number'));
  if (!m) {
    check(!FLEET, 'the pushed fleet has no outliers');
    console.log('SKIP fleet filters and distributions: no outliers in this database');
    return;
  }
  const o = m.outliers.find((x) => typeof x.value === 'number');

  step = 'fleet: filtered by model and host';
  await redrawn(page, () => page.selectOption('#fleet-model', m.model), 'fleet');
  check(page.url().endsWith(`#/fleet?${new URLSearchParams({ model: m.model })}`), `the model filter's address: ${page.url()}`);
  const one = await checkFleetShown(page, `?${new URLSearchParams({ model: m.model })}`);
  equal(one.models.map((x) => x.model), [m.model], 'the models of the model filter');
  await redrawn(page, () => page.selectOption('#fleet-host', o.host), 'fleet');
  const query = `?${new URLSearchParams({ model: m.model, host: o.host })}`;
  check(page.url().endsWith(`#/fleet${query}`), `the host filter's address: ${page.url()}`);
  const host = await checkFleetShown(page, query);
  check(host.devices.length > 0 && host.devices.every((d) => d.host === o.host), `the API's devices on ${o.host}`);

  step = 'fleet: an outlier\'s figure';
  const section = modelSection(m.model);
  await redrawn(page, () => page.click(`${section} tr[data-name="${o.uuid}"] a[href^="#/fleet/distribution"] >> nth=0`), 'fleet/distribution');
  const q = new URLSearchParams(page.url().split('?')[1]);
  await checkDistribution(page, q.get('model'), q.get('metric'), q.get('device'));

  // a deep link straight to a distribution, the device marked
  await openView(page, `#/fleet/distribution?${new URLSearchParams({ model: m.model, metric: o.metric, device: o.uuid })}`, 'fleet/distribution');
  await checkDistribution(page, m.model, o.metric, o.uuid);
  await screenshot(page, 'fleet-distribution');

  // a category: the bank map, with the GPU whose map differs marked if there is one
  const cat = fleet.models.flatMap((x) => x.outliers.filter((y) => typeof y.text === 'string').map((y) => [x.model, y]))[0];
  const [catModel, catMetric, catDevice] = cat ? [cat[0], cat[1].metric, cat[1].uuid]
    : [m.model, 'gpuprobe_register_bank_map', fleet.devices.find((d) => d.model === m.model).uuid];
  await openView(page, `#/fleet/distribution?${new URLSearchParams({ model: catModel, metric: catMetric, device: catDevice })}`, 'fleet/distribution', 'fleet/distribution (a category)');
  await checkDistribution(page, catModel, catMetric, catDevice);

  // an outlier's links: the device's result of that job, and the job
  step = 'fleet: an outlier\'s links';
  await openView(page, `#/fleet?${new URLSearchParams({ model: m.model })}`, 'fleet', 'fleet (one model)');
  const row = `${section} tr[data-name="${o.uuid}"] >> nth=0`;
  await page.click(`${row} >> a[href^="#/device/"]`);
  await page.waitForSelector('#view[data-ready^="device/"]', { timeout: TIMEOUT_MS });
  const provenance = await page.textContent('.provenance');
  check(provenance.includes(`job ${o.job_id}`), `the device's result is not job ${o.job_id}'s: ${provenance}`);
  await page.goBack();
  await page.waitForSelector('#view[data-ready="fleet"]', { timeout: TIMEOUT_MS });
  await page.click(`${row} >> a[href="#/?job=${o.job_id}"]`);
  await page.waitForSelector(`#job-detail-${o.job_id} table.events`, { timeout: TIMEOUT_MS });
  const job = await apiGet(`/api/v1/jobs/${o.job_id}`);
  equal(await page.getAttribute(`tr.job[data-job-id="${o.job_id}"]`, 'data-state'), job.state, 'the job an outlier links to');
}

/* README's dashboard table has a row for every view the test opened: its
 * address ("#/", "#/device/UUID/latency", "#/predict?device=UUID") names
 * the view's first part. */
function checkReadmeAddresses() {
  step = 'README: the dashboard\'s addresses';
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.split(/^## Dashboard$/m)[1]?.split(/^## /m)[0] || '';
  const addresses = [...section.matchAll(/^\| `(#\/[^`]*)` \|/gm)].map((m) => m[1]);
  check(addresses.length > 0, 'README.md has no table of the dashboard\'s addresses');
  const views = [...new Set([...viewsOpened].filter((v) => v !== 'unknown').map((v) => v.split('/')[0]))];
  const first = (a) => a.slice(2).split(/[/?]/)[0] || 'overview';
  const missing = views.filter((v) => !addresses.some((a) => first(a) === v));
  equal(missing, [], `views without a row in README.md's dashboard table (${addresses.join(' ')})`);
}

async function main() {
  for (const [k, v] of Object.entries({ BASE_URL: BASE, TOKEN, FIXTURES })) if (!v) throw new Error(`${k} is not set`);
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  const started = Date.now();

  // what the API says, to hold the page to
  step = 'the API';
  const inv = await apiGet('/api/v1/devices');
  const openapi = await apiGet('/openapi.json');
  const withResults = [];
  for (const device of inv.devices) {
    const docs = {};
    for (const v of VIEWS) docs[v] = await apiTry(`/api/v1/devices/${device.uuid}/${v}`);
    if (VIEWS.every((v) => docs[v])) withResults.push({ device, docs });
  }
  check(withResults.length >= WANT_DEVICES, `${withResults.length} devices have all six results, expected at least ${WANT_DEVICES}`);
  const jobs = [];
  for (const echo of ['first', 'second']) {
    const r = await apiPost('/api/v1/jobs', { kind: 'test', params: { mode: 'ok', echo } }, TOKEN);
    equal(r.status, 202, 'submitting a test job');
    jobs.push(r.body.id);
  }
  for (const id of jobs) await waitJob(id, ['succeeded']);
  // a job that fails for good (its worker exits 3: no retry), for the attempts shown
  const failing = await apiPost('/api/v1/jobs', { kind: 'test', params: { mode: 'exit', exit_code: 3 } }, TOKEN);
  equal(failing.status, 202, 'submitting a failing test job');
  await waitJob(failing.body.id, ['failed']);

  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprobe-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage'],
    viewport: { width: 1400, height: 900 },
    timezoneId: ZONE,
    acceptDownloads: true,
  });
  try {
    const page = context.pages()[0] || await context.newPage();
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      if (allowedErrors && allowedErrors.test(msg.text())) return;
      consoleErrors.push(`${step}: ${msg.text()}`);
    });
    page.on('pageerror', (e) => consoleErrors.push(`${step}: uncaught ${e.message}`));

    await checkOverview(page, inv, jobs);
    if (inv.devices.length) await checkJobsFresh(page, jobs, inv.devices[0].uuid);
    await checkAttempts(page, failing.body.id, jobs[0]);
    await checkTimes(page, jobs[0], withResults[0]?.device);
    if (withResults.length) {
      await checkDevices(page, withResults);
      const wantParts = Number(process.env.GPUPROBE_WEB_L2_PARTITIONS || 0);
      check(partitionResults >= wantParts, `${partitionResults} memory results showed an L2 partition search, expected ${wantParts}`);
      const wantPlacement = Number(process.env.GPUPROBE_WEB_PLACEMENT || 0);
      check(placementResults >= wantPlacement, `${placementResults} memory results showed a block placement, expected ${wantPlacement}`);
      const wantDsmem = Number(process.env.GPUPROBE_WEB_DSMEM || 0);
      check(dsmemResults >= wantDsmem, `${dsmemResults} memory results showed distributed shared memory, expected ${wantDsmem}`);
      const wantAsync = Number(process.env.GPUPROBE_WEB_ASYNC_COPY || 0);
      check(asyncResults >= wantAsync, `${asyncResults} memory results showed asynchronous copies, expected ${wantAsync}`);
      const wantFailed = Number(process.env.GPUPROBE_WEB_FAILED_FIGURES || 0);
      check(failedCurveResults >= wantFailed && failedFigureResults >= wantFailed,
        `${failedCurveResults} memory results showed a failed curve and ${failedFigureResults} a failed figure, expected ${wantFailed}`);
      await checkCompare(page, withResults);
      if (process.env.GPUPROBE_WEB_COMPARE_SIDE) {
        step = 'compare tables';
        check(sideValueColumns >= 2 && sidePlaceholders >= 1, `the side-by-side tables held ${sideValueColumns} device columns to their documents and ${sidePlaceholders} placeholders: the data planted for them is missing`);
      }
    } else {
      console.log('SKIP device and compare views: no device in this database has all six results');
    }
    await checkOccupancy(page, inv);
    if (withResults.length) await checkPredict(page, withResults[0].device, openapi);
    await checkTraces(page);
    await checkSubmitCancel(page);
    if (withResults.length) await checkExportImport(page, withResults, openapi);
    await checkFleet(page);
    if (withResults.length) await checkNarrow(page, withResults[0].device);
    await checkNarrowJobs(page, jobs[0]);
    if (withResults.length) await checkUnreachable(page, withResults[0].device);
    await checkOverviewOutage(page);
    await checkStatusLines(page);
    await openView(page, '#/no/such/page', 'unknown');
    check((await page.textContent('#view')).includes('No such page'), 'an unknown address says so');
    check(await page.textContent('#status') !== 'Loading…', 'an unknown address: the status line still says "Loading…"');
    loadTimes.pop();
    checkReadmeAddresses();
    step = 'console';
    check(consoleErrors.length === 0, `console errors:\n  ${consoleErrors.join('\n  ')}`);
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }

  console.log('view load times (navigation start to the view\'s data drawn):');
  for (const t of loadTimes) console.log(`  ${t.view.padEnd(44)} ${String(t.ms).padStart(6)} ms`);
  console.log(`ok: ${withResults.length} devices with results (${withResults.map((w) => w.device.name).join(', ') || 'none'}), ` +
    `${loadTimes.length} views, no console errors, ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((e) => {
  console.error(`FAIL ${e.message}`);
  if (consoleErrors.length) console.error(`console errors so far:\n  ${consoleErrors.join('\n  ')}`);
  process.exit(1);
});
