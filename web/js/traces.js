/*
 * The trace page (#/traces): upload a memory trace to POST
 * /api/v1/traces/sort with the settings of the trace-sort job kind (the form
 * is built from its schema in /api/v1/job-kinds, so the settings have one
 * list), then show the summary, the per-SM table and chart, and offer the
 * sorted trace for download.
 *
 * A small trace is answered at once with the sorted file, the summary's
 * totals in the Gpuprobe-Summary header and its job in Gpuprobe-Job, whose
 * result adds the per-SM part. A large one is answered 202 with the job,
 * which this page follows until it ends; its output is then served by
 * /api/v1/jobs/{id}/output.
 */

const TRACE_FILE_PARAMS = new Set(['input', 'output', 'pc_flags']);
const TRACE_POLL_MS = 1000;

const tracePage = { url: null };

function settingField(name, spec) {
  const id = `trace-${name}`;
  const label = el('label', { for: id, text: name.replace(/_/g, '-') });
  let input;
  if (spec.type === 'enum') {
    input = el('select', { id, name }, el('option', { value: '', text: spec.default ? `default (${spec.default})` : 'default' }),
      (spec.enum || []).map((v) => el('option', { value: v, text: v })));
  } else {
    const number = spec.type === 'integer' || spec.type === 'number';
    input = el('input', {
      id, name, type: number ? 'number' : 'text', min: spec.minimum, max: spec.maximum,
      step: spec.type === 'integer' ? 1 : number ? 'any' : null, placeholder: 'default',
    });
  }
  return el('div', { class: 'field', title: spec.description || null }, label, input);
}

/* "sms=4&seed=7" from the fields that were filled in. */
function traceQuery(params) {
  const q = new URLSearchParams();
  for (const name of Object.keys(params)) {
    const v = $(`trace-${name}`).value.trim();
    if (v !== '') q.set(name.replace(/_/g, '-'), v);
  }
  return q.toString();
}

function traceTotals(s, jobId) {
  const st = s.stalls || {};
  return [
    jobId ? ['Job', el('a', { href: `#/?job=${jobId}`, text: String(jobId) })] : null,
    ['Records in', fmtCount(s.records_in)],
    ['Requests out', fmtCount(s.requests_out)],
    ['Coalescing ratio', fmtNum(s.coalescing_ratio)],
    ['Instructions', fmtCount(s.instructions)],
    ['Blocks / warps', `${fmtCount(s.blocks)} / ${fmtCount(s.warps)}`],
    ['Ticks', fmtCount(s.ticks)],
    ['MSHR-full ticks', fmtCount(st.mshr_full_ticks)],
    ['All-blocked ticks', fmtCount(st.all_blocked_ticks)],
    ['Dependency waits', fmtCount(st.dependency_waits)],
    ['Most in flight', fmtCount(st.max_in_flight)],
    ['Formats', `${s.input_format} → ${s.output_format}, ${fmtBytes(s.output_bytes)}`],
    ['Settings', el('span', { class: 'mono', text: Object.entries(s.params || {}).map(([k, v]) => `${k}=${v}`).join(' ') })],
  ];
}

function showTraceSummary(summary, sms, jobId, href, filename) {
  destroyCharts();
  $('trace-summary-section').hidden = false;
  $('trace-totals').replaceWith(kvList(traceTotals(summary, jobId), 'kv'));
  $('trace-summary-section').querySelector('dl').id = 'trace-totals';
  const link = $('trace-download');
  link.href = href;
  link.download = filename;
  const table = $('trace-per-sm');
  const canvas = $('trace-chart');
  if (!Array.isArray(sms) || !sms.length) {
    table.tHead.replaceChildren();
    table.tBodies[0].replaceChildren(el('tr', {}, el('td', { text: 'The per-SM summary is not available.' })));
    canvas.parentElement.hidden = true;
    return;
  }
  const keys = Object.keys(sms[0]);
  table.tHead.replaceChildren(el('tr', {}, keys.map((k) => el('th', { scope: 'col', class: 'num', text: k.replace(/_/g, ' ') }))));
  table.tBodies[0].replaceChildren(...sms.map((s) => el('tr', {}, keys.map((k) =>
    el('td', { class: 'num', text: typeof s[k] === 'number' ? fmtNum(s[k]) : String(s[k]) })))));
  canvas.parentElement.hidden = false;
  makeChart(canvas, {
    type: 'bar',
    data: {
      labels: sms.map((s) => `SM ${s.sm}`),
      datasets: [
        { label: 'requests out', data: sms.map((s) => s.requests_out), ...barStyle(seriesStyle(0)), yAxisID: 'y' },
        { label: 'ticks', data: sms.map((s) => s.ticks), ...barStyle(seriesStyle(1)), yAxisID: 'y1' },
      ],
    },
    options: {
      scales: {
        y: { min: 0, position: 'left', title: axisTitle('requests out') },
        y1: { min: 0, position: 'right', grid: { drawOnChartArea: false }, title: axisTitle('ticks') },
      },
      plugins: { legend: { position: 'bottom' } },
    },
  });
}

function traceMessage(text, bad) {
  const out = $('trace-result');
  out.hidden = false;
  out.textContent = text;
  out.classList.toggle('bad', bad);
}

/* Follows a 202's job until it ends, asking often at first. */
async function followSortJob(id, name, ctx) {
  for (let wait = 100; ; wait = Math.min(TRACE_POLL_MS, wait * 2)) {
    const job = await api(`/api/v1/jobs/${id}`);
    if (!ctx.alive()) return;
    if (job.state === 'succeeded') {
      traceMessage(`Sorted by job ${id}.`, false);
      const { sms, ...totals } = job.result || {};
      showTraceSummary(totals, sms, id, `/api/v1/jobs/${id}/output`, `${name}.sorted`);
      return;
    }
    if (TERMINAL.has(job.state)) {
      traceMessage(`Job ${id} ${job.state}: ${job.error || ''}`, true);
      return;
    }
    traceMessage(`Job ${id} is ${job.state}…`, false);
    await new Promise((r) => setTimeout(r, wait));
  }
}

async function sortTrace(ev, params, ctx) {
  ev.preventDefault();
  const file = $('trace-file').files[0];
  if (!file) {
    traceMessage('Choose a trace file first.', true);
    return;
  }
  traceMessage(`Sorting ${file.name} (${fmtBytes(file.size)})…`, false);
  $('trace-summary-section').hidden = true;
  let response;
  try {
    response = await apiResponse(`/api/v1/traces/sort?${traceQuery(params)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', ...authHeaders() },
      body: file,
    });
  } catch (e) {
    traceMessage(e.message, true);
    return;
  }
  if (response.status === 202) {
    const job = await response.json();
    await followSortJob(job.id, file.name, ctx);
    markReady('traces');
    return;
  }
  const blob = await response.blob();
  let totals = null;
  try {
    totals = JSON.parse(response.headers.get('Gpuprobe-Summary') || 'null');
  } catch {
    totals = null;
  }
  if (!ctx.alive()) return;
  if (tracePage.url) URL.revokeObjectURL(tracePage.url);
  tracePage.url = URL.createObjectURL(blob);
  const ext = totals?.output_format === 'bin' ? 'bin' : 'csv';
  // the answer names its job, whose result holds the per-SM part as well
  const jobId = response.headers.get('Gpuprobe-Job');
  const job = jobId ? await api(`/api/v1/jobs/${jobId}`).catch(() => null) : null;
  if (!ctx.alive()) return;
  traceMessage(`Sorted ${file.name}: ${fmtCount(totals?.requests_out)} requests.`, false);
  const { sms } = job?.result || {};
  showTraceSummary(totals || {}, sms, job?.id, tracePage.url, `${file.name.replace(/\.[^.]*$/, '')}.sorted.${ext}`);
  markReady('traces');
}

async function renderTraces(main, route, ctx) {
  main.replaceChildren(fromTemplate('tpl-traces'));
  const kinds = await loadKinds(true);
  if (!ctx.alive()) return;
  const sort = kinds.find((k) => k.name === 'trace-sort');
  const params = Object.fromEntries(Object.entries(sort?.params || {}).filter(([n]) => !TRACE_FILE_PARAMS.has(n)));
  $('trace-settings').replaceChildren(...Object.entries(params).map(([n, s]) => settingField(n, s)));
  $('trace-form').addEventListener('submit', (ev) => sortTrace(ev, params, ctx));
  markUpdated();
}
