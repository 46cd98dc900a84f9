/*
 * The occupancy calculator (#/occupancy?cc=9.0|device=UUID&block=&regs=&smem=):
 * the daemon's answer for one launch (blocks per SM, the limiter, every
 * resource's limit) and, as NVIDIA's occupancy calculator draws them, the
 * active warps per SM as threads per block, registers per thread and shared
 * memory per block each vary with the others held.
 *
 * Every number comes from the daemon: the answer and its curves from one
 * POST /api/v1/model/occupancy with "curves": true, so the page and the
 * model cannot disagree, and the compute capabilities offered from GET
 * /api/v1/model/occupancy, the rules the calculator knows.
 */

const occ = { run: 0 };

function occTargetOptions(ccs, devices, names) {
  return [
    el('optgroup', { label: 'Compute capability' }, ccs.map((cc) => el('option', { value: `cc:${cc}`, text: `compute capability ${cc}` }))),
    devices.length ? el('optgroup', { label: 'Device' }, devices.map((d) =>
      el('option', { value: `device:${d.uuid}`, text: `${names.get(d.uuid)} (cc ${d.compute_capability})` }))) : null,
  ];
}

function occInputs() {
  const [how, what] = $('occ-target').value.split(/:(.*)/s);
  const body = how === 'device' ? { device: what } : { compute_capability: what };
  body.block = Number($('occ-block').value);
  body.regs = Number($('occ-regs').value);
  body.smem = Number($('occ-smem').value || 0);
  // a kernel that raised its dynamic shared-memory maximum (above 48 KiB)
  if ($('occ-optin').value !== '') body.max_dynamic_smem = Number($('occ-optin').value);
  return body;
}

function occHash(body) {
  const q = new URLSearchParams();
  if (body.device) q.set('device', body.device);
  else q.set('cc', body.compute_capability);
  q.set('block', body.block);
  q.set('regs', body.regs);
  q.set('smem', body.smem);
  if (body.max_dynamic_smem !== undefined) q.set('optin', body.max_dynamic_smem);
  return hashFor(['occupancy'], q);
}

function occAnswer(r) {
  const limits = Object.entries(r.limits || {});
  const headline = el('p', { class: 'occ-headline' },
    el('span', { id: 'occ-blocks', class: 'big', text: String(r.blocks_per_sm) }), ' blocks per SM · ',
    el('span', { id: 'occ-warps', class: 'big', text: `${r.active_warps}` }), ` of ${r.warps?.max_per_sm ?? '—'} warps · occupancy `,
    el('span', { id: 'occ-occupancy', class: 'big', text: fmtPercent(r.occupancy, 1) }), ' · limited by ',
    el('span', { id: 'occ-limiter', class: 'big', text: (r.limiter || '—').replace(/_/g, ' ') }),
    (r.limiters || []).length > 1 ? ` (as much: ${(r.limiters || []).filter((l) => l !== r.limiter).join(', ')})` : '');
  const refused = r.refused ? el('p', { class: 'empty bad', id: 'occ-refused', text: `No block fits: ${r.refused}` }) : null;
  const table = dataTable([
    { head: 'Resource', value: ([k]) => k.replace(/_/g, ' ') },
    { head: 'Blocks per SM it allows', cls: 'num', value: ([, v]) => (v === null ? 'no limit' : String(v)) },
    { head: '', value: ([k]) => (k === r.limiter ? el('strong', { text: 'limiter' }) : (r.limiters || []).includes(k) ? 'also limits' : '') },
  ], limits, 'Each resource\'s limit');
  table.id = 'occ-limits';
  for (const row of table.tBodies[0].rows) {
    if (row.cells[0].textContent === String(r.limiter).replace(/_/g, ' ')) row.classList.add('limiter');
  }
  const details = kvList([
    ['Warps per block', r.warps?.per_block],
    ['Registers per warp (allocated)', fmtCount(r.registers?.per_warp_allocated)],
    ['Registers per block', fmtCount(r.registers?.per_block)],
    ['Shared memory per block (allocated)', fmtBytes(r.shared_memory?.per_block_allocated)],
    ['Shared memory per SM (carveout)', fmtBytes(r.shared_memory?.per_sm)],
    ['Largest dynamic shared memory', fmtBytes(r.shared_memory?.max_dynamic)],
    ['Device', r.device ? deviceLabel(r.device) : `compute capability ${r.compute_capability}`],
  ]);
  return [headline, refused, el('div', { class: 'two-col' }, table, details)];
}

/* One curve of the answer as chart points. */
function occPoints(curve) {
  return (curve?.x || []).map((x, i) => ({ x, y: curve.active_warps[i] }));
}

/* step: the x ticks' spacing. */
function occChart(canvas, title, xTitle, points, here, maxWarps, fx, step) {
  const xs = points.map((p) => p.x);
  return makeChart(canvas, {
    type: 'line',
    data: {
      datasets: [
        { label: 'active warps per SM', data: points, borderColor: PALETTE[0], backgroundColor: PALETTE[0], pointRadius: 0, borderWidth: 2, stepped: 'before', spanGaps: false, clip: 6 },
        { label: 'this launch', data: [here], borderColor: COLOR_BAD, backgroundColor: COLOR_BAD, pointRadius: 6, showLine: false, clip: 8 },
      ],
    },
    options: {
      parsing: false,
      scales: {
        x: { type: 'linear', min: Math.min(...xs), max: Math.max(...xs), title: axisTitle(xTitle), ticks: { callback: fx, stepSize: step } },
        y: { min: 0, max: maxWarps, ticks: { stepSize: 8 }, title: axisTitle('active warps per SM') },
      },
      plugins: {
        title: { display: true, text: title },
        legend: { display: false },
        decimation: { enabled: true, algorithm: 'min-max' },
        tooltip: { callbacks: { label: (c) => `${fx(c.parsed.x)}: ${c.parsed.y} warps (${fmtPercent(c.parsed.y / maxWarps, 0)})` } },
      },
    },
  });
}

async function occCalculate(ctx) {
  occ.run += 1;
  const run = occ.run;
  const body = occInputs();
  window.history.replaceState(null, '', occHash(body));
  const out = $('occ-result');
  let r;
  try {
    r = await apiPost('/api/v1/model/occupancy', { ...body, curves: true });
  } catch (e) {
    out.hidden = false;
    out.replaceChildren(el('p', { class: 'empty bad', id: 'occ-error', text: e.message }));
    $('occ-curves-section').hidden = true;
    if (e.status === 0) setStatus(e.message, true);
    else markUpdated(); // the daemon answered: the inputs were refused
    return;
  }
  if (run !== occ.run || !ctx.alive()) return;
  markUpdated();
  out.hidden = false;
  out.replaceChildren(...occAnswer(r).filter(Boolean));

  const rules = r.rules || {};
  const maxSmem = r.shared_memory?.max_dynamic ?? 49152;
  destroyCharts();
  $('occ-curves-section').hidden = false;
  const maxWarps = rules.max_warps_per_sm || r.warps?.max_per_sm || 64;
  const here = r.refused ? 0 : r.active_warps;
  const c = r.curves || {};
  occChart($('occ-chart-block'), 'Threads per block', 'threads per block', occPoints(c.block), { x: body.block, y: here }, maxWarps, String, 128);
  occChart($('occ-chart-regs'), 'Registers per thread', 'registers per thread', occPoints(c.regs), { x: body.regs, y: here }, maxWarps, String, 32);
  occChart($('occ-chart-smem'), 'Shared memory per block', 'shared memory per block', occPoints(c.smem), { x: body.smem, y: here }, maxWarps, fmtBytes, maxSmem > 65536 ? 32768 : 8192);
}

async function renderOccupancy(main, route, ctx) {
  main.replaceChildren(fromTemplate('tpl-occupancy'));
  const [inv, known] = await Promise.all([
    loadInventory(5000).catch(() => ({ devices: [] })),
    api('/api/v1/model/occupancy').catch(() => ({ rules: [] })),
  ]);
  if (!ctx.alive()) return;
  const devices = Array.isArray(inv.devices) ? inv.devices : [];
  const ccs = (known.rules || []).map((x) => x.compute_capability);
  const target = $('occ-target');
  target.replaceChildren(...occTargetOptions(ccs, devices, deviceNames(devices)));
  const q = route.query;
  if (q.get('device')) target.value = `device:${q.get('device')}`;
  else target.value = `cc:${q.get('cc') || '9.0'}`;
  if (!target.value) target.value = 'cc:9.0';
  for (const f of ['block', 'regs', 'smem', 'optin']) if (q.get(f) !== null) $(`occ-${f}`).value = q.get(f);
  $('occ-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    occCalculate(ctx).then(() => markReady('occupancy'));
  });
  await occCalculate(ctx); // it says on the status line whether the daemon answered
}
