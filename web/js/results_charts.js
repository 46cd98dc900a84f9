/*
 * Result views that are mostly charts: the memory hierarchy (latency against
 * footprint for .ca and .cg loads, cache capacities marked; the L2's
 * partitions and distributed shared memory as tables; the asynchronous
 * copies: bandwidth against transfer size per method, latency table), the
 * control-code sweep (cycles per stall count, wrong answers marked), dual issue (the
 * patterns' FFMA rate against the single-issue reference and the peak) and
 * the kernel-time model's validation (measured against predicted). The
 * dataset builders take a device's colour and name so the compare view
 * (compare.js) draws several devices with the same code.
 */

const LOADS = [['ca', '.ca (L1 and L2)', []], ['cg', '.cg (L2 only)', [6, 4]]];

/* ---- memory ---------------------------------------------------------------- */

/* The cache a level of a load reaches: .cg loads skip the L1, so their
 * first level is the L2. The last level with no capacity is the curve's
 * end past the last cache (probes/memory_analysis.c): the latency at the
 * largest footprint, where a chase over data read just before still hits
 * that cache now and then; not device memory's latency, which is the
 * document's device_memory_cycles (a chase after the L2 was evicted). */
function cacheName(load, level, last) {
  if (last) return level > 1 ? `past the ${cacheName(load, level - 1, false)}, curve's end` : 'the curve\'s end';
  return `L${load === 'cg' ? level + 1 : level}`;
}

/* The largest footprint a memory document's curves reach (4 x the L2),
 * or null. */
function curveEndBytes(doc) {
  const ends = ['ca', 'cg'].map((l) => doc.curves?.[l]).filter(Array.isArray)
    .flatMap((c) => c.map((p) => p.bytes)).filter((b) => typeof b === 'number');
  return ends.length ? Math.max(...ends) : null;
}

/* What the two device-memory-like figures are: the curve's end (the levels
 * table's last rows) and device_memory_cycles. */
function deviceMemoryNote(doc) {
  const end = curveEndBytes(doc);
  return `The last row of each load is the curve's end, past the L2: the latency at the largest footprint measured${end ? ` (${fmtBytes(end)})` : ''}, ` +
    'a random chase over data read just before, so some loads still hit in the L2: a lower bound of device memory\'s latency, not that latency. ' +
    'Device memory is a chase over the L2\'s size after twice as much other data has evicted it from both caches: every load goes to device memory. ' +
    'The kernel-time model takes its .cg figure.';
}

/* The latency curves of one device's memory document, and (markers) a
 * dashed vertical line at each cache level's capacity. colors: one colour,
 * or [colour of .ca, colour of .cg]; pointStyle: the device's (compare). */
function memoryDatasets(doc, colors, name, markers, pointStyle = 'circle') {
  const sets = [];
  let top = 0;
  const colorOf = (load) => (Array.isArray(colors) ? colors[load === 'ca' ? 0 : 1] : colors);
  for (const [load, label, dash] of LOADS) {
    const color = colorOf(load);
    const curve = doc.curves?.[load];
    if (!Array.isArray(curve)) continue;
    const data = curve.filter((p) => median(p.cycles) !== null).map((p) => ({ x: p.bytes, y: median(p.cycles) }));
    for (const p of data) top = Math.max(top, p.y);
    sets.push({
      label: `${name ? `${name} ` : ''}${label}`,
      data,
      borderColor: color,
      backgroundColor: color,
      borderDash: dash,
      pointRadius: 2,
      pointStyle,
      showLine: true,
      series: `${load}`,
    });
  }
  if (markers) {
    for (const [load, label] of LOADS) {
      const levels = doc.levels?.[load];
      if (!Array.isArray(levels)) continue;
      for (const lv of levels) {
        if (typeof lv.up_to_bytes !== 'number') continue;
        const what = `${name ? `${name}: ` : ''}${cacheName(load, lv.level, false)} as seen by ${label.split(' ')[0]}, ${fmtBytes(lv.up_to_bytes)} at ${fmtNum(lv.cycles, 3)} cycles`;
        sets.push(vline(what, lv.up_to_bytes, 0, top * 1.05, alpha(colorOf(load), 0.6)));
      }
    }
  }
  return sets;
}

/* legendMarkers false: the capacity lines stay out of the legend (their
 * tooltips and the levels table name them), for charts of many devices;
 * pointStyles: the legend keys each series by its point style (the
 * devices' in the compare view) instead of its line (.ca solid, .cg
 * dashed, which the labels also say). */
function memoryChart(canvas, datasets, { legendMarkers = true, pointStyles = false } = {}) {
  return makeChart(canvas, {
    type: 'scatter',
    data: { datasets },
    options: {
      scales: {
        x: bytesAxis('footprint (bytes, log scale)'),
        y: { min: 0, title: axisTitle('load-to-use latency (SM cycles)') },
      },
      plugins: {
        tooltip: { callbacks: { label: pointLabel(fmtBytes, (y) => `${fmtNum(y)} cycles`) } },
        legend: {
          position: 'bottom',
          labels: { filter: (item, data) => legendMarkers || !data.datasets[item.datasetIndex].marker, usePointStyle: pointStyles },
        },
      },
    },
  });
}

function levelRows(doc) {
  const rows = [];
  for (const [load, label] of LOADS) {
    const levels = doc.levels?.[load];
    if (Array.isArray(levels)) {
      levels.forEach((lv, i) => rows.push({
        load: label,
        level: `${lv.level}: ${cacheName(load, lv.level, lv.up_to_bytes === null && i === levels.length - 1)}`,
        cycles: fmtNum(lv.cycles),
        upTo: lv.up_to_bytes === null ? '—' : fmtBytes(lv.up_to_bytes),
      }));
    } else if (levels?.error) {
      rows.push({ load: label, level: '—', cycles: levels.error, upTo: '—' });
    }
  }
  return rows;
}

/* The curves that failed, each with its reason: the chart has no line for
 * them, and a line missing without a word reads as a line hidden. */
function failedCurves(doc, name = '') {
  return LOADS.filter(([load]) => doc.curves?.[load] && !Array.isArray(doc.curves[load]))
    .map(([load, label]) => el('p', { class: 'empty bad curve-failed', 'data-load': load,
      text: `${name ? `${name}: ` : ''}the ${label} curve was not measured: ${doc.curves[load].error || doc.curves[load]}` }));
}

function renderMemory(body, doc) {
  const { box, canvas } = chartBox('Load latency against footprint, .ca and .cg', 'tall');
  body.append(el('p', { class: 'hint', text: 'Pointer chase of one thread over a footprint; each point is the median of the repeats. Dashed vertical lines: the capacity of each cache level the curve shows.' }), box,
    ...failedCurves(doc));
  memoryChart(canvas, memoryDatasets(doc, [PALETTE[0], PALETTE[1]], '', true));
  const dep = doc.departure || {};
  body.append(el('div', { class: 'two-col' },
    el('div', { class: 'scroll' }, Object.assign(dataTable([
      { head: 'Load', value: (r) => r.load },
      { head: 'Level', value: (r) => r.level },
      { head: 'Cycles', cls: 'num', value: (r) => r.cycles },
      { head: 'Up to', cls: 'num', value: (r) => r.upTo },
    ], levelRows(doc), 'Cache levels'), { id: 'memory-levels' })),
    kvList([
      ['Shared memory', fmtFigures([doc.shared_cycles], 'cycles')],
      ['Device memory, caches evicted (.ca / .cg)', fmtFigures([doc.device_memory_cycles?.ca, doc.device_memory_cycles?.cg], 'cycles')],
      ['Departure, coalesced', fmtFigures([dep.coalesced_cycles], 'cycles')],
      ['Departure, uncoalesced', fmtFigures([dep.uncoalesced_cycles], 'cycles')],
      dep.l1_hit ? ['Departure on L1 hits', fmtFigures([dep.l1_hit.coalesced_cycles, dep.l1_hit.uncoalesced_cycles], 'cycles')] : null,
      dep.clock_overhead_cycles ? ['Clock read overhead', fmtFigures([dep.clock_overhead_cycles], 'cycles')] : null,
    ])),
    el('p', { class: 'hint', id: 'memory-levels-note', text: deviceMemoryNote(doc) }));
  const parts = l2PartitionRows(doc.l2_partitions);
  if (parts.length) {
    body.append(el('h3', { text: 'L2 partitions' }),
      el('p', { class: 'hint', text: 'Single loads timed from every SM after one SM read the lines: SMs that find half the lines slower read through the other partition; those lines are homed in the first SM\'s.' }),
      kvList(parts, 'kv l2-partitions'));
  }
  const deal = blockPlacementRows(doc.block_placement);
  if (deal.length) {
    body.append(el('h3', { text: 'Block placement' }),
      el('p', { class: 'hint', text: 'The SM each block of one launch ran on (%smid), as many one-warp blocks as every SM holds at once: the order the block scheduler deals blocks in, which decides which blocks share an L1. gpuprobe trace sort --device deals a trace\'s blocks in it. The check: a launch of 1024-thread blocks, whose SMs the order predicts with full SMs skipped.' }),
      kvList(deal, 'kv block-placement'));
  }
  renderDistributedShared(body, doc.distributed_shared);
  renderAsyncCopies(body, doc.async_copy);
}

/* Distributed shared memory (probes/dsmem.h): one row per cluster size; a
 * size that did not launch shows its reason. Nothing for a result from
 * before the probe. */
function renderDistributedShared(body, d) {
  if (!d) return;
  body.append(el('h3', { text: 'Distributed shared memory' }));
  if (d.error) {
    body.append(el('p', { class: 'hint dsmem-error', text: `Not measured: ${d.error}` }));
    return;
  }
  const med = (s) => (s && s.median !== undefined && s.median !== null ? fmtNum(s.median) : '—');
  const sizes = Array.isArray(d.sizes) ? d.sizes : [];
  body.append(el('p', { class: 'hint', text: 'Within a thread-block cluster (one block an SM): a dependent chase through the block\'s own shared memory, a neighbour\'s and the farthest rank\'s (cycles a load, medians), and 16-byte reads of its own and of the next block\'s shared memory (bytes a clock an SM). Driver width and ranks seen must equal the size asked.' }),
    el('div', { class: 'dsmem scroll' }, dataTable([
      { head: 'Cluster', cls: 'num', value: (r) => `${r.asked}` },
      { head: 'Driver width / ranks', cls: 'num', value: (r) => `${r.driver_width ?? '—'} / ${r.ranks_seen ?? '—'}${r.agrees ? '' : ' (disagree)'}` },
      { head: 'Launched', value: (r) => (r.launched ? 'yes' : `no: ${r.error || 'unknown'}`) },
      { head: 'Local', cls: 'num', value: (r) => med(r.latency_cycles?.local) },
      { head: 'Neighbour', cls: 'num', value: (r) => med(r.latency_cycles?.neighbour) },
      { head: 'Farthest', cls: 'num', value: (r) => med(r.latency_cycles?.farthest) },
      { head: 'B/clk/SM local', cls: 'num', value: (r) => med(r.bytes_per_clk_sm?.local) },
      { head: 'B/clk/SM remote', cls: 'num', value: (r) => med(r.bytes_per_clk_sm?.remote) },
      { head: 'GB/s/SM remote', cls: 'num', value: (r) => (r.gb_s_sm?.remote != null ? fmtNum(r.gb_s_sm.remote) : '—') },
    ], sizes, 'Cluster sizes (latency in cycles a load)')));
}

/* ---- asynchronous copies (probes/async_copy.h) --------------------------------- */

const ASYNC_METHODS = [
  ['ld', 'ld.global + st.shared'], ['ca', 'cp.async.ca'], ['cg', 'cp.async.cg'],
  ['bulk', 'cp.async.bulk'], ['tensor', 'cp.async.bulk.tensor'],
];
const ASYNC_LEVELS = [['dram', 'from device memory', []], ['l2', 'from the L2', [6, 4]]];
const asyncLabel = (m) => (ASYNC_METHODS.find(([k]) => k === m) || [m, m])[1];
/* The copies' latency figure has one name wherever it is shown (this
 * view's table, the compare view's rows; docs/api.md's words), and its
 * size is the bytes of one copy, a warp's for the per-thread methods, so
 * that a row of the one matches a row of the other. */
const ASYNC_LATENCY = 'One copy and its wait from the L2 (cycles)';
const asyncCopyBytes = (bytes) => `${fmtBytes(bytes)} a copy`;

/* Bandwidth against transfer size: one line per method and level (solid:
 * device memory, dashed: the L2), points in size order; none measured, none. */
function asyncDatasets(ac) {
  const sets = [];
  if (!Array.isArray(ac?.bandwidth)) return sets;
  ASYNC_METHODS.forEach(([m, label], i) => {
    for (const [level, where, dash] of ASYNC_LEVELS) {
      const data = ac.bandwidth
        .filter((p) => p.method === m && p.level === level && typeof p.bytes_per_clk_per_sm === 'number')
        .map((p) => ({ x: p.bytes, y: p.bytes_per_clk_per_sm }))
        .sort((a, b) => a.x - b.x);
      if (!data.length) continue;
      const color = PALETTE[i % PALETTE.length];
      sets.push({
        label: `${label}, ${where}`, data, borderColor: color, backgroundColor: color,
        borderDash: dash, pointRadius: 2.5, showLine: true, series: `async-${m}-${level}`,
      });
    }
  });
  return sets;
}

/* "512 B a copy (16 B per thread)" for the per-thread methods, "4 KiB a
 * copy" for the bulk ones; a point from before bytes_per_copy was kept
 * gives its own bytes. */
function asyncPointSize(p) {
  const perThread = ['ld', 'ca', 'cg'].includes(p.method) ? `${fmtBytes(p.bytes)} per thread` : '';
  if (typeof p.bytes_per_copy !== 'number') return perThread || fmtBytes(p.bytes);
  return `${asyncCopyBytes(p.bytes_per_copy)}${perThread ? ` (${perThread})` : ''}`;
}

function asyncLatencyRows(ac) {
  return (Array.isArray(ac?.latency) ? ac.latency : []).map((p) => ({
    method: asyncLabel(p.method),
    size: asyncPointSize(p),
    cycles: p.error ? `failed: ${p.error}` : fmtNum(p.cycles?.median),
    spread: p.cycles ? `${fmtNum(p.cycles.min)}–${fmtNum(p.cycles.max)}` : '—',
  }));
}

function renderAsyncCopies(body, ac) {
  if (!ac) return;
  body.append(el('h3', { text: 'Asynchronous copies, global to shared' }));
  if (ac.error) {
    body.append(kvList([['Asynchronous copies', `failed: ${ac.error}`]], 'kv async-copy'));
    return;
  }
  const sets = asyncDatasets(ac);
  if (sets.length) {
    const { box, canvas } = chartBox('Bandwidth against transfer size, per copy method', 'async-copy');
    body.append(el('p', { class: 'hint', text: 'One block per SM streams chunks into shared memory; bytes per SM clock of the median block. Transfer size: bytes per thread for ld and cp.async, per copy for the bulk forms. Dashed: a buffer the L2 holds.' }), box);
    makeChart(canvas, {
      type: 'scatter',
      data: { datasets: sets },
      options: {
        scales: {
          x: bytesAxis('transfer size (bytes, log scale)'),
          y: { min: 0, title: axisTitle('bytes per SM clock') },
        },
        plugins: {
          tooltip: { callbacks: { label: pointLabel(fmtBytes, (y) => `${fmtNum(y)} B/clk/SM`) } },
          legend: { position: 'bottom' },
        },
      },
    });
  }
  const table = dataTable([
    { head: 'Method', value: (r) => r.method },
    { head: 'Size', cls: 'num', value: (r) => r.size },
    { head: 'Cycles (median)', cls: 'num', value: (r) => r.cycles },
    { head: 'Min–max', cls: 'num', value: (r) => r.spread },
  ], asyncLatencyRows(ac), ASYNC_LATENCY);
  table.id = 'async-latency';
  body.append(el('div', { class: 'scroll' }, table), kvList([['Tensor map', ac.tensor_map]], 'kv async-copy'));
}

/* The partition search (probes/l2_parts.h) as label/value rows; none for a
 * result from before it. */
function l2PartitionRows(p) {
  if (!p) return [];
  if (p.error) return [['Partition search', `failed: ${p.error}`]];
  const c = p.cycles || {};
  const cyc = (v) => (v === null || v === undefined ? '—' : `${Math.round(v)}`);
  const home = p.home || {};
  return [
    ['Verdict', p.reason ? `${p.verdict}: ${p.reason}` : p.verdict],
    p.sms_per_partition ? ['SMs per partition', p.sms_per_partition.join(' / ')] : null,
    c.far !== undefined ? ['L2 hit, near / far partition', `${cyc(c.near)} / ${cyc(c.far)} cycles`] : null,
    c.far_second_read !== undefined
      ? ['Far line read again', `${cyc(c.far_second_read)} cycles${p.copies_kept ? ' (the near partition kept a copy)' : ''}`] : null,
    c.memory_home_far !== undefined
      ? ['Miss homed near / far', `${cyc(c.memory_home_near)} / ${cyc(c.memory_home_far)} cycles`] : null,
    home.granule_bytes ? ['Home granule', fmtBytes(home.granule_bytes)] : null,
    Array.isArray(home.mask_bits) ? ['Home bits (below 2 MiB)', home.mask_bits.join(', ')] : null,
  ].filter(Boolean);
}

/* The block placement (probes/placement.h): verdict, repeats, the check
 * launch, the first SMs dealt and the commonest gaps between the blocks of
 * one SM. Nothing for a result from before the probe. */
function blockPlacementRows(p) {
  if (!p) return [];
  if (p.error) return [['Block placement', `failed: ${p.error}`]];
  if (p.status !== 'determined') return [['Verdict', `${p.status}: ${p.reason || ''}`]];
  const order = Array.isArray(p.order) ? p.order : [];
  const last = new Map(), gaps = new Map();
  order.forEach((sm, b) => {
    if (last.has(sm)) gaps.set(b - last.get(sm), (gaps.get(b - last.get(sm)) || 0) + 1);
    last.set(sm, b);
  });
  const common = [...gaps.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4)
    .map(([g, n]) => `${g} (${n}x)`).join(', ');
  const c = p.check || {};
  return [
    ['Verdict', `determined: ${p.blocks} blocks of ${p.threads_per_block} threads on ${p.sms} SMs, ${p.blocks_per_sm} a SM`],
    ['Launches dealt as the first', `${p.same_as_first} of ${p.launches}, the first included`],
    c.predicted !== undefined && c.predicted !== null
      ? ['Check launch', `${c.predicted} of ${c.blocks} blocks of ${c.threads_per_block} threads on the SM predicted`]
      : (c.error ? ['Check launch', `failed: ${c.error}`] : null),
    order.length ? ['First SMs dealt', `${order.slice(0, 16).join(' ')} ...`] : null,
    common ? ['Blocks apart on one SM (commonest)', common] : null,
  ].filter(Boolean);
}

/* ---- control codes ----------------------------------------------------------- */

const SWEEP_SERIES = [
  ['chain', 0, 'dependent chain, yield 0', PALETTE[0], []],
  ['chain', 1, 'dependent chain, yield 1', PALETTE[0], [5, 3]],
  ['stream', 0, 'independent stream, yield 0', PALETTE[2], []],
  ['stream', 1, 'independent stream, yield 1', PALETTE[2], [5, 3]],
];

function sweepChart(canvas, instr) {
  const sets = SWEEP_SERIES.map(([what, y, label, color, dash]) => {
    const points = instr.sweep.filter((s) => s.yield === y && median(s[`${what}_cycles`]) !== null);
    const ok = points.map((s) => s[`${what}_correct`] !== false);
    return {
      label,
      data: points.map((s) => ({ x: s.stall, y: median(s[`${what}_cycles`]) })),
      borderColor: color,
      backgroundColor: color,
      borderDash: dash,
      borderWidth: 1.5,
      pointStyle: ok.map((g) => (g ? 'circle' : 'crossRot')),
      pointRadius: ok.map((g) => (g ? 2.5 : 5)),
      pointBorderColor: ok.map((g) => (g ? color : COLOR_BAD)),
      pointBorderWidth: ok.map((g) => (g ? 1 : 2)),
      correct: ok,
      showLine: true,
    };
  });
  let top = 0;
  for (const s of sets) for (const p of s.data) top = Math.max(top, p.y);
  if (typeof instr.min_safe_stall === 'number') {
    sets.push(vline(`smallest safe stall: ${instr.min_safe_stall}`, instr.min_safe_stall, 0, top, alpha(PALETTE[3], 0.8)));
  }
  if (typeof instr.compiler_stall === 'number' && instr.compiler_stall !== instr.min_safe_stall) {
    sets.push(vline(`compiler's stall: ${instr.compiler_stall}`, instr.compiler_stall, 0, top, alpha(PALETTE[1], 0.8)));
  }
  const stalls = `smallest safe stall ${instr.min_safe_stall ?? 'none'}, compiler's ${instr.compiler_stall ?? '—'}`;
  return makeChart(canvas, {
    type: 'scatter',
    data: { datasets: sets },
    options: {
      scales: {
        x: { min: 0, max: 15, ticks: { stepSize: 1 }, title: axisTitle('stall count') },
        y: { min: 0, title: axisTitle('cycles per instruction') },
      },
      plugins: {
        title: { display: true, text: `${instr.name} (${instr.sass}): ${stalls}`, align: 'start' },
        legend: { display: false },
        tooltip: {
          callbacks: {
            label: (c) => (c.dataset.correct
              ? `${c.dataset.label}: stall ${c.parsed.x}, ${fmtNum(c.parsed.y)} cycles, ${c.dataset.correct[c.dataIndex] ? 'right answer' : 'WRONG answer'}`
              : c.dataset.label),
          },
        },
      },
    },
  });
}

function renderControlCodes(body, doc) {
  const instrs = Array.isArray(doc.instructions) ? doc.instructions : [];
  body.append(el('p', { class: 'hint' },
    'Each instruction\'s stall count edited from 0 to 15, with the yield bit 0 and 1: cycles per instruction of a dependent chain and of an independent stream. ',
    el('span', { class: 'bad', text: '×' }), ' marks a run that computed a wrong answer; dashed verticals: the smallest safe stall and the compiler\'s own.'));
  const grid = el('div', { class: 'chart-grid two', id: 'sweep-grid' });
  const key = (color, dash, text) => el('li', {}, el('span', { class: `line-key${dash ? ' dashed' : ''}`, 'data-color': color }), text);
  const legend = el('ul', { class: 'legend' },
    SWEEP_SERIES.map(([, , label, color, dash]) => key(color, dash.length > 0, label)),
    el('li', {}, el('span', { class: 'bad', text: '× ' }), 'wrong answer'),
    key(PALETTE[3], true, 'smallest safe stall'), key(PALETTE[1], true, 'the compiler\'s stall, where it differs'));
  for (const k of legend.querySelectorAll('.line-key')) k.style.borderColor = k.dataset.color;
  body.append(legend, grid);
  for (const instr of instrs) {
    if (instr.error || !Array.isArray(instr.sweep)) {
      grid.append(el('div', { class: 'empty', text: `${instr.name}: ${instr.error || 'no sweep'}` }));
      continue;
    }
    const { box, canvas } = chartBox(`Cycles per stall count for ${instr.name}`, 'medium');
    box.dataset.instruction = instr.name;
    grid.append(box);
    sweepChart(canvas, instr);
  }
  body.append(el('div', { class: 'scroll' }, dataTable([
    { head: 'Instruction', value: (i) => el('code', { text: i.name }) },
    { head: 'SASS', cls: 'mono', value: (i) => i.sass },
    { head: 'Compiler stall / yield', cls: 'num', value: (i) => `${i.compiler_stall ?? '—'} / ${i.compiler_yield ?? '—'}` },
    { head: 'Smallest safe stall', cls: 'num', value: (i) => i.min_safe_stall ?? '—' },
    { head: 'Chain latency', cls: 'num', value: (i) => fmtFigure(i.chain_latency_cycles) },
    { head: 'Chain fit (slope, from stall)', cls: 'num', value: (i) => (i.fit?.chain ? `${fmtNum(i.fit.chain.slope, 3)}, ${i.fit.chain.from_stall}` : '—') },
  ], instrs, 'Instructions swept')));
  const meanings = Object.entries(doc.meanings || {});
  if (meanings.length) {
    body.append(el('h3', { text: 'What the fields do' }), el('dl', { class: 'meanings' }, meanings.map(([k, m]) =>
      el('div', {}, el('dt', { text: k.replace(/_/g, ' ') }), el('dd', { text: m?.text || JSON.stringify(m) })))));
  }
  issueOrderTable(body, doc.meanings?.scheduler);
}

/* The issue-order policies (probes/issue_order.h) and their heads; an
 * experiment's hits of one as "hits / decisions", and its rule. Shared with
 * the compare view's side-by-side table (compare_tables.js). */
const ISSUE_POLICIES = [['youngest', 'Youngest'], ['oldest', 'Oldest'], ['round-robin', 'Round-robin'], ['lowest-id', 'Lowest id']];
const issueHits = (r, p) => (r.decisions ? `${r.hits?.[p] ?? 0} / ${r.decisions}` : '—');
const issueRuleText = (r) => (Array.isArray(r.rule) ? r.rule.join(' or ') : 'not determined');

/* The issue-order experiment's decisions per edit (the "scheduler" meaning):
 * how often each policy named the warp that issued next. */
function issueOrderTable(body, sched) {
  const by = sched?.data?.by_experiment;
  if (!by || typeof by !== 'object') return;
  const rows = Object.entries(by).map(([name, c]) => ({ name, ...c }));
  body.append(el('div', { class: 'scroll', id: 'issue-order' }, dataTable([
    { head: 'Experiment', value: (r) => el('code', { text: r.name }), title: (r) => r.edit || '' },
    { head: 'Decisions', cls: 'num', value: (r) => r.decisions ?? 0 },
    ...ISSUE_POLICIES.map(([p, head]) => ({ head, cls: 'num', value: (r) => issueHits(r, p) })),
    { head: 'Overlapping neighbours', cls: 'num', value: (r) => `${r.overlapped ?? 0} / ${r.pairs ?? 0}` },
    { head: 'Segment cycles (median)', cls: 'num', value: (r) => (r.segment_cycles ? fmtNum(r.segment_cycles.median, 0) : '—') },
    { head: 'Kept the issue at edited ends', cls: 'num', value: (r) => (r.events ? `${r.held ?? 0} / ${r.events}` : '—') },
    { head: 'Rule', value: issueRuleText },
  ], rows, `Issue order after a stall or yield: ${sched.rule || 'not determined'}`)));
}

/* ---- dual issue -------------------------------------------------------------- */

const isReference = (r) => /^1(-1)+$/.test(r.pattern);

/* The patterns' bars at each warps-per-scheduler count, the single-issue
 * reference at one warp per scheduler for the same operands, and the peak. */
function dualIssueChart(canvas, doc) {
  const results = Array.isArray(doc.results) ? doc.results : [];
  const cats = [];
  const seen = new Set();
  for (const r of results) {
    const key = `${r.pattern}|${r.operands}`;
    if (!isReference(r) && !seen.has(key)) {
      seen.add(key);
      cats.push({ pattern: r.pattern, operands: r.operands, key });
    }
  }
  const warps = [...new Set(results.map((r) => r.warps_per_scheduler))].sort((a, b) => a - b);
  const value = (pattern, operands, w) => median(results.find((r) =>
    r.pattern === pattern && r.operands === operands && r.warps_per_scheduler === w)?.ffma_per_sm_clock);
  const ref = new Map(results.filter((r) => isReference(r) && r.warps_per_scheduler === warps[0])
    .map((r) => [r.operands, median(r.ffma_per_sm_clock)]));
  const refFor = (c) => ref.get(c.operands) ?? ref.get('conflict_free') ?? null;
  const datasets = warps.map((w, i) => ({
    type: 'bar',
    label: `${w} warp${w > 1 ? 's' : ''} per scheduler`,
    data: cats.map((c) => value(c.pattern, c.operands, w)),
    ...barStyle(seriesStyle(i)),
    order: 2,
  }));
  datasets.push({
    type: 'line',
    label: `single-issue reference (${results.find(isReference)?.pattern || '1-…-1'}, ${warps[0]} warp per scheduler)`,
    data: cats.map(refFor),
    borderColor: cssVar('--fg'),
    backgroundColor: cssVar('--fg'),
    borderDash: [6, 4],
    pointRadius: 0,
    stepped: 'middle',
    order: 1,
  });
  if (typeof doc.peak_ffma_per_sm_clock === 'number') {
    datasets.push({
      type: 'line',
      label: `peak: ${doc.peak_ffma_per_sm_clock} FFMA per SM per clock`,
      data: cats.map(() => doc.peak_ffma_per_sm_clock),
      borderColor: COLOR_BAD,
      backgroundColor: COLOR_BAD,
      pointRadius: 0,
      order: 0,
    });
  }
  return makeChart(canvas, {
    type: 'bar',
    data: { labels: cats.map((c) => [c.pattern, c.operands.replace(/_/g, '-')]), datasets },
    options: {
      scales: { y: { min: 0, title: axisTitle('FFMA per SM per clock') }, x: { ticks: { autoSkip: false } } },
      plugins: { legend: { position: 'bottom' } },
    },
  });
}

function renderDualIssue(body, doc) {
  const observed = doc.dual_issue_observed;
  body.append(el('p', { class: `verdict ${observed ? 'good' : ''}` },
    el('strong', { text: observed ? 'Dual issue observed. ' : 'No dual issue. ' }), doc.verdict || ''));
  const { box, canvas } = chartBox('FFMA rate of each issue pattern against the single-issue reference and the peak', 'tall');
  body.append(box);
  dualIssueChart(canvas, doc);
  const ops = Object.entries(doc.operands || {});
  body.append(kvList([
    ['Peak', `${doc.peak_ffma_per_sm_clock ?? '—'} FFMA per SM per clock: ${doc.peak_source || ''}`],
    ...ops.map(([k, o]) => [`Operands “${k.replace(/_/g, '-')}”`, o.rule || '']),
  ]));
  const rows = Array.isArray(doc.results) ? doc.results : [];
  body.append(el('details', { class: 'runs' }, el('summary', { text: `Every run (${rows.length})` }), el('div', { class: 'scroll' }, dataTable([
    { head: 'Pattern', cls: 'mono', value: (r) => r.pattern },
    { head: 'Operands', value: (r) => r.operands },
    { head: 'Warps/scheduler', cls: 'num', value: (r) => r.warps_per_scheduler },
    { head: 'Nominal', cls: 'num', value: (r) => fmtNum(r.nominal_ffma_per_sm_clock) },
    { head: 'FFMA /SM/clk', cls: 'num', value: (r) => fmtFigure(r.ffma_per_sm_clock), title: (r) => figureTitle(r.ffma_per_sm_clock) },
    { head: 'vs peak', cls: 'num', value: (r) => fmtPercent(r.efficiency_vs_peak) },
    { head: 'vs nominal', cls: 'num', value: (r) => fmtPercent(r.efficiency_vs_nominal) },
  ], rows))));
}

/* ---- model validation ---------------------------------------------------------- */

function validationPoints(doc) {
  return (doc.kernels || []).filter((k) => median(k.measured_s) !== null && typeof k.predicted_s === 'number')
    .map((k) => ({ x: median(k.measured_s), y: k.predicted_s, name: k.name }));
}

/* Kernels of one device or more as measured (x) against predicted (y), on
 * log axes, with the diagonal where the model is right. */
function validationChart(canvas, series) {
  const all = series.flatMap((s) => s.data);
  const lo = Math.min(...all.flatMap((p) => [p.x, p.y])) / 1.5;
  const hi = Math.max(...all.flatMap((p) => [p.x, p.y])) * 1.5;
  const datasets = series.map((s) => ({ pointRadius: 5, pointHoverRadius: 7, ...s }));
  if (all.length) {
    datasets.push({ label: 'predicted = measured', type: 'line', data: [{ x: lo, y: lo }, { x: hi, y: hi }], borderColor: '#868e96', borderWidth: 1, pointRadius: 0, marker: true });
    datasets.push({ label: 'a factor of 2 off', type: 'line', data: [{ x: lo, y: lo * 2 }, { x: hi / 2, y: hi }], borderColor: '#adb5bd', borderDash: [4, 4], borderWidth: 1, pointRadius: 0, marker: true });
    datasets.push({ label: '', type: 'line', data: [{ x: lo * 2, y: lo }, { x: hi, y: hi / 2 }], borderColor: '#adb5bd', borderDash: [4, 4], borderWidth: 1, pointRadius: 0, marker: true });
  }
  return makeChart(canvas, {
    type: 'scatter',
    data: { datasets },
    options: {
      scales: {
        x: { ...secondsAxis('measured time per launch'), min: lo, max: hi },
        y: { ...secondsAxis('predicted time per launch'), min: lo, max: hi },
      },
      plugins: {
        // the legend shows each series' point style: colours repeat after 8
        legend: { position: 'bottom', labels: { filter: (item) => item.text !== '', usePointStyle: true } },
        tooltip: {
          callbacks: {
            label: (c) => (c.raw.name
              ? `${c.dataset.label}: ${c.raw.name}: measured ${fmtSeconds(c.parsed.x)}, predicted ${fmtSeconds(c.parsed.y)}`
              : c.dataset.label),
          },
        },
      },
    },
  });
}

/* A bandwidth FIGURE (bytes per second) as GB/s; one not measured says so
 * (a missing median divided by 1e9 read "0 GB/s"). */
function fmtBandwidth(fig) {
  if (fig?.error) return `not measured (${fig.error})`;
  const m = median(fig);
  return m === null ? '—' : fmtGBs(m);
}

function renderValidation(body, doc) {
  const kernels = Array.isArray(doc.kernels) ? doc.kernels : [];
  body.append(kvList([
    ['Geometric mean of |error|', typeof doc.gmae === 'number' ? fmtPercent(doc.gmae) : '—'],
    ['Kernels compared', `${doc.kernels_compared ?? '—'} of ${kernels.length}`],
    ['DRAM bandwidth', fmtBandwidth(doc.bandwidth?.dram_bytes_per_s)],
    ['L2 bandwidth', fmtBandwidth(doc.bandwidth?.l2_bytes_per_s)],
    ['Host link bandwidth', fmtBandwidth(doc.bandwidth?.link_bytes_per_s)],
    ['Parameters from', el('span', {},
      doc.parameters_from?.latency_job ? el('a', { href: `#/?job=${doc.parameters_from.latency_job}`, text: `latency job ${doc.parameters_from.latency_job}` }) : 'no latency run',
      ', ',
      doc.parameters_from?.memory_job ? el('a', { href: `#/?job=${doc.parameters_from.memory_job}`, text: `memory job ${doc.parameters_from.memory_job}` }) : 'no memory run')],
  ]));
  const { box, canvas } = chartBox('Measured against predicted kernel time', 'tall square');
  body.append(box, el('p', { class: 'hint', text: `Timing: ${doc.timing || '—'}.` }));
  validationChart(canvas, validationPoints(doc).map((p, i) => {
    const { color, pointStyle } = seriesStyle(i);
    return { label: p.name, data: [p], borderColor: color, backgroundColor: alpha(color, 0.75), pointStyle };
  }));
  body.append(el('div', { class: 'scroll' }, dataTable([
    { head: 'Kernel', value: (k) => el('code', { text: k.name }) },
    { head: 'What it does', value: (k) => k.character || '' },
    { head: 'Launch', cls: 'mono', value: (k) => (k.launch ? `${(k.launch.grid || []).join('×')} × ${(k.launch.block || []).join('×')}` : '—') },
    { head: 'Measured', cls: 'num', value: (k) => fmtSeconds(median(k.measured_s)), title: (k) => figureTitle(k.measured_s) },
    { head: 'Predicted', cls: 'num', value: (k) => fmtSeconds(k.predicted_s) },
    { head: 'Error', cls: 'num', value: (k) => (typeof k.rel_error === 'number' ? `${k.rel_error > 0 ? '+' : ''}${fmtPercent(k.rel_error, 0)}` : '—') },
    { head: 'Bound', value: (k) => k.prediction?.prediction?.bound || '—', title: (k) => k.prediction?.prediction?.case_meaning || null },
    { head: 'Why no prediction', value: (k) => k.prediction_failure || '' },
  ], kernels, 'The validation kernels')));
}
