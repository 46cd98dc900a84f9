/*
 * Result views that are mostly tables: the instruction table of the latency
 * probe (sortable by any column) and the register-bank map with the cost of
 * conflicts. Each renderer takes the result section's body and the API's
 * document (docs/api.md, "Results").
 */

/* ---- sortable tables ---------------------------------------------------- */

/* A table whose column heads sort it. columns: {head, key(row) -> sortable
 * value, cell(row) -> text|node, title?(row), cls?, abbr?}. Rows keep the
 * API's order until a head is pressed; pressing it again reverses. */
function sortableTable(columns, rows, caption, id) {
  const table = el('table', { class: 'data sortable', id });
  const tbody = el('tbody');
  let sortBy = -1;
  let dir = 1;
  const heads = columns.map((c, i) => {
    const button = el('button', { type: 'button', class: 'sort', text: c.head, title: c.abbr || null });
    button.addEventListener('click', () => {
      dir = sortBy === i ? -dir : 1;
      sortBy = i;
      draw();
    });
    return el('th', { scope: 'col', class: c.cls || null, 'aria-sort': 'none', 'data-col': i }, button);
  });

  function compare(a, b) {
    const ka = columns[sortBy].key(a);
    const kb = columns[sortBy].key(b);
    const na = ka === null || ka === undefined || Number.isNaN(ka);
    const nb = kb === null || kb === undefined || Number.isNaN(kb);
    if (na || nb) return na === nb ? 0 : na ? 1 : -1; // blanks last either way
    if (typeof ka === 'number' && typeof kb === 'number') return dir * (ka - kb);
    return dir * String(ka).localeCompare(String(kb));
  }

  function draw() {
    const order = sortBy < 0 ? rows : [...rows].sort(compare);
    heads.forEach((h, i) => h.setAttribute('aria-sort', i !== sortBy ? 'none' : dir > 0 ? 'ascending' : 'descending'));
    tbody.replaceChildren(...order.map((r) => el('tr', { 'data-name': r.name ?? null }, columns.map((c) => {
      const v = c.cell(r);
      return el('td', { class: c.cls || null, title: c.title ? c.title(r) : null }, v instanceof Node ? v : String(v ?? '—'));
    }))));
  }

  table.append(caption ? el('caption', { text: caption }) : '', el('thead', {}, el('tr', {}, heads)), tbody);
  draw();
  return table;
}

/* ---- latency ------------------------------------------------------------ */

function dependencyText(sass) {
  if (!sass || sass.fixed_latency === null || sass.fixed_latency === undefined) return '—';
  return sass.fixed_latency ? 'stall count' : 'scoreboard';
}

function renderLatency(body, doc) {
  const entries = Array.isArray(doc.entries) ? doc.entries : [];
  const fig = (name, head, abbr) => ({
    head, abbr, cls: 'num',
    key: (e) => median(e[name]),
    cell: (e) => fmtFigure(e[name]),
    title: (e) => figureTitle(e[name]) || (name.startsWith('throughput') ? e.throughput_error : e.error),
  });
  const columns = [
    { head: 'Instruction', key: (e) => e.name, cell: (e) => el('code', { text: e.name }) },
    { head: 'Group', key: (e) => e.group, cell: (e) => e.group },
    {
      head: 'SASS', key: (e) => e.sass_opcode, cls: 'mono',
      cell: (e) => `${e.sass_opcode}${e.sass?.verified ? '' : ' (unverified)'}`,
      title: (e) => (e.sass?.verified ? 'the timed machine code holds this opcode' : 'not checked against the machine code'),
    },
    fig('latency_cycles', 'Latency', 'dependent-chain latency, cycles'),
    // issue_cycles and exec_cycles are what an instruction adds between two
    // clock reads (probes/latency.h; docs/hopper-figures.md, "issue_cycles of 0")
    fig('issue_cycles', 'Marginal cost', 'cycles one instruction adds between two clock reads (clock;op;clock less clock;clock): its marginal cost in that sequence, not its issue latency; 0 where it issues in the clock read\'s shadow'),
    fig('exec_cycles', 'Execution', 'cycles an instruction and one dependent use of its result add between two clock reads (clock;op;op;clock less clock;clock): about one step\'s latency plus the marginal cost, so close to the Latency column where the marginal cost is 0; for a few (DADD, F2F, RCP) it does not split that way: take the Latency column'),
    fig('throughput_per_clock_per_sm', 'Throughput /clk/SM', 'instructions per clock per SM (warp lanes; mma.sync steps: warp operations; wgmma: warpgroup operations)'),
    fig('tflops', 'TFLOP/s', 'tensor-core steps: the whole GPU at the clock the throughput ran at'),
    fig('throughput_one_warpgroup_per_clock_per_sm', '1 warpgroup /clk/SM', 'wgmma steps with one warpgroup an SM (the throughput column: several)'),
    {
      head: 'Safe stall', abbr: 'smallest stall count that still computed the right answer (control-codes probe)', cls: 'num',
      key: (e) => e.min_safe_stall?.stall ?? null,
      cell: (e) => (e.min_safe_stall ? String(e.min_safe_stall.stall) : '—'),
      title: (e) => (e.min_safe_stall ? `from control-codes job ${e.min_safe_stall.job_id}` : 'not swept by the control-codes probe'),
    },
    {
      head: 'Compiler stall', cls: 'num', abbr: 'the stall count ptxas wrote',
      key: (e) => e.sass?.compiler_stall ?? null, cell: (e) => e.sass?.compiler_stall ?? '—',
    },
    {
      head: 'Dependency', abbr: 'what holds a dependent instruction back: the stall count (fixed latency) or the scoreboard (variable latency)',
      key: (e) => dependencyText(e.sass), cell: (e) => dependencyText(e.sass),
    },
    {
      head: 'Note', key: (e) => e.error || e.note || '', cls: 'note',
      cell: (e) => (e.error ? el('span', { class: 'bad', text: e.error }) : e.note || ''),
    },
  ];
  body.append(
    el('p', { class: 'hint', text: `${entries.length} instructions, in catalog order; press a column's head to sort. Figures are the median of ${doc.repeats ?? '—'} repeats (hover for the spread); latencies in SM cycles.` }),
    el('div', { class: 'scroll' }, sortableTable(columns, entries, 'Instruction latency and throughput', 'latency-table')));
}

/* ---- banks -------------------------------------------------------------- */

const REUSE_SLOTS = ['a', 'b', 'c'];

function reuseText(mask) {
  const on = REUSE_SLOTS.filter((_, i) => mask & (1 << i));
  return on.length ? on.join(', ') : 'none';
}

function sourceText(sources) {
  return (sources || []).map((s) => (typeof s === 'number' ? `R${s}` : s)).join(', ');
}

function bankMap(doc) {
  const map = Array.isArray(doc.map) ? doc.map : [];
  const untested = new Map((doc.untested_registers || []).map((u) => [u.register, u.reason]));
  const last = Math.max(map.length - 1, ...untested.keys());
  const cells = [];
  for (let r = 0; r <= last; r += 1) {
    const bank = r < map.length ? map[r] : null;
    const why = untested.get(r);
    cells.push(el('span', {
      class: bank === null ? 'reg untested' : `reg bank-${bank % PALETTE.length}`,
      'data-bank': bank ?? 'untested',
      title: bank === null ? `R${r}: not tested — ${why || 'no figure'}` : `R${r}: bank ${bank}`,
      text: `R${r}`,
    }));
  }
  const classes = Array.isArray(doc.classes) ? doc.classes : [];
  const legend = el('ul', { class: 'legend' }, classes.map((regs, b) =>
    el('li', {}, el('span', { class: `swatch bank-${b % PALETTE.length}` }),
      `bank ${b}: ${regs.length} registers (R${regs.slice(0, 3).join(', R')}, …)`)),
  untested.size ? el('li', {}, el('span', { class: 'swatch untested' }), `not tested: ${untested.size}`) : null);
  return el('div', { class: 'bank-map-wrap' }, legend, el('div', { class: 'bank-map', id: 'bank-map' }, cells));
}

function renderBanks(body, doc) {
  const costs = Object.entries(doc.costs || {});
  const ref = median(doc.reference?.ffma_per_sm_clock);
  body.append(kvList([
    ['Banks', doc.bank_count],
    // the banks probe counts warp instructions; the latency and dual-issue
    // views count thread FFMAs (32 to a warp instruction): both are shown
    ['Conflict-free FFMA rate', ref === null ? '—' : `${fmtNum(ref)} warp instructions per SM per clock (${fmtNum(ref * 32)} thread FFMAs)`],
    ['Threshold', `${fmtNum(doc.threshold)} of the conflict-free rate`],
    ['Confirmation', doc.confirmation ? `${doc.confirmation.agree} of ${doc.confirmation.pairs} random pairs agree` : '—'],
    ['Runs', doc.runs ? `${doc.runs.total} (all pairs would be ${fmtCount(doc.runs.all_pairs_would_be)})` : '—'],
    ['Machine code checked', doc.sass_check?.verified ? 'yes' : 'no'],
  ]));
  body.append(el('h3', { text: 'Register map' }), bankMap(doc));

  body.append(el('h3', { text: 'Cost of conflicts' }), el('p', { class: 'hint' },
    'FFMA rate of each operand case over the conflict-free rate: ', el('span', { class: 'bad', text: 'red' }),
    ' a bank conflict (below the threshold), ', el('span', { class: 'good', text: 'green' }), ' none.'));
  const { box, canvas } = chartBox('FFMA throughput of each operand case relative to the conflict-free rate', 'medium');
  body.append(box);
  makeChart(canvas, {
    type: 'bar',
    data: {
      labels: costs.map(([name, c]) => `${name.replace(/_/g, ' ')} (${sourceText(c.sources)}; reuse ${reuseText(c.reuse)})`),
      datasets: [{
        label: 'FFMA rate / conflict-free rate',
        data: costs.map(([, c]) => median(c.ratio)),
        backgroundColor: costs.map(([, c]) => (c.conflict ? alpha(COLOR_BAD, 0.75) : alpha(PALETTE[2], 0.75))),
      }],
    },
    options: {
      indexAxis: 'y',
      scales: {
        x: { min: 0, max: 1.1, title: axisTitle('FFMA per SM per clock, relative to conflict-free (1 = no cost)') },
        y: { ticks: { autoSkip: false } },
      },
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: (c) => `ratio ${fmtNum(c.parsed.x)}` } } },
    },
  });
  body.append(el('div', { class: 'scroll' }, dataTable([
    { head: 'Case', value: ([n]) => n.replace(/_/g, ' ') },
    { head: 'Sources (a, b, c)', cls: 'mono', value: ([, c]) => sourceText(c.sources) },
    { head: 'Reuse', value: ([, c]) => reuseText(c.reuse) },
    { head: 'Warp FFMA /SM/clk', cls: 'num', value: ([, c]) => fmtNum(median(c.ffma_per_sm_clock)), title: ([, c]) => figureTitle(c.ffma_per_sm_clock) },
    { head: 'Ratio', cls: 'num', value: ([, c]) => fmtNum(median(c.ratio), 3) },
    { head: 'Conflict', value: ([, c]) => el('span', { class: c.conflict ? 'bad' : 'good', text: c.conflict ? 'yes' : 'no' }) },
  ], costs, 'Operand cases, in the order the probe ran them')));
  body.append(reuseCache(doc.reuse_cache));
}

/* The reuse cache behind the reuse flags (probes/banks_reuse.h): each
 * question's test beside its conflict-free ("free") and flags-cleared
 * controls, where it lies between them, the outcome and the rule. */
function reuseCache(rc) {
  const box = el('div', { id: 'reuse-cache' }, el('h3', { text: 'Reuse cache' }));
  if (!rc) {
    box.append(el('p', { class: 'hint', text: 'Not measured in this run (results stored before the reuse-cache patterns).' }));
    return box;
  }
  if (rc.not_run) {
    box.append(el('p', { class: 'hint', text: `Not run: ${rc.not_run}` }));
    return box;
  }
  const regs = rc.registers || {};
  box.append(el('p', { class: 'hint' },
    `Eight-FFMA patterns: every FFMA reads R${regs.c} beside at most one other register of its bank, `
    + `R${regs.a} cached from slot a (reuse flag); the conflict-free (free) and flags-cleared (cleared) controls `
    + 'turn the test into conflicts per period, set beside what each candidate cache design predicts. '
    + `${rc.determined} of ${(rc.questions || []).length} questions determined.`));
  if (rc.answer) box.append(el('p', { id: 'reuse-answer', text: `Cache design: ${rc.answer}` }));
  box.append(el('ul', { class: 'rules', id: 'reuse-rules' }, (rc.rules || []).map((r) => el('li', { text: r }))));
  const outcomeCls = (o) => (o === 'hit' ? 'good' : o === 'miss' ? 'bad' : null);
  box.append(el('div', { class: 'scroll' }, dataTable([
    { head: 'Question', value: (q) => q.asks },
    { head: 'Test', cls: 'num', value: (q) => fmtNum(q.ratios?.test, 3) },
    { head: 'Free', cls: 'num', value: (q) => fmtNum(q.ratios?.free, 3) },
    { head: 'Cleared', cls: 'num', value: (q) => fmtNum(q.ratios?.cleared, 3) },
    { head: 'Conflicts', cls: 'num', value: (q) => (q.conflicts == null ? (q.position == null ? '' : `position ${fmtNum(q.position, 2)}`) : fmtNum(q.conflicts, 2)) },
    { head: 'Outcome', value: (q) => el('span', { class: outcomeCls(q.outcome), text: q.outcome, title: q.rule || q.why || '' }) },
  ], rc.questions || [], 'Reuse-cache questions: FFMA rate over the conflict-free rate')));
  return box;
}
