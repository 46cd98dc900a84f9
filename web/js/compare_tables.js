/*
 * The compare view's side-by-side tables (compare.js): one table per result
 * member, a row per fact and a column per device, for the members the
 * single-device views show as lists or small tables (the L2's partitions,
 * distributed shared memory, the asynchronous copies, the issue-order
 * experiment, the reuse cache).
 *
 * DESIGN
 * A member is turned into [label, value] pairs by a function of one
 * device's documents; the table's rows are the union of every device's
 * labels in first-seen order, so two devices line up fact by fact and a
 * fact one device lacks is "—" in its column. A device whose result has no
 * such member (stored before the probe) answers null: its whole column says
 * "not measured". The pairs reuse the single-device views' formatters
 * (l2PartitionRows, the copy methods' names, the copies' latency figure's
 * name and size, issueHits, issueRuleText in results_charts.js), so the
 * two views cannot word a figure differently.
 * Nothing here fetches and nothing is computed from the figures: compare.js
 * hands in the documents, and the copies' best rates are the probe's own
 * summary.
 */

const NOT_MEASURED = 'not measured';

/* A table of `caption`, one column per device of docs ({name, ...}); row i
 * holds each device's value for the i-th label. pairsOf(d) -> [[label,
 * value], ...] | null (the member is absent). With no device measured, a
 * line saying so instead of an empty table. */
function sideBySide(docs, pairsOf, caption, id) {
  const per = docs.map((d) => pairsOf(d));
  if (per.every((p) => p === null)) {
    return el('p', { class: 'empty compare-none', id, text: `${caption}: not measured on any of these devices.` });
  }
  const labels = [];
  for (const pairs of per) for (const [k] of pairs || []) if (!labels.includes(k)) labels.push(k);
  const cell = (i, label) => {
    if (per[i] === null) return NOT_MEASURED;
    const hit = per[i].find(([k]) => k === label);
    return hit ? hit[1] : '—';
  };
  const table = dataTable([
    { head: '', value: (label) => label },
    ...docs.map((d, i) => ({ head: d.name, cls: 'num', value: (label) => cell(i, label) })),
  ], labels, caption);
  table.id = id;
  table.classList.add('side-by-side');
  return el('div', { class: 'scroll' }, table);
}

/* ---- memory --------------------------------------------------------------- */

/* Distributed shared memory (probes/dsmem.h): per cluster size its latency
 * and bandwidth medians; a size that did not launch says why. */
function dsmemPairs(d) {
  if (!d) return null;
  if (d.error) return [['Distributed shared memory', `failed: ${d.error}`]];
  return (Array.isArray(d.sizes) ? d.sizes : []).flatMap((s) => {
    const lat = `Cluster of ${s.asked}: latency local / neighbour / farthest`;
    const bw = `Cluster of ${s.asked}: B/clk/SM local / remote`;
    if (!s.launched) return [[lat, `not launched: ${s.error || 'unknown'}`], [bw, '—']];
    const l = s.latency_cycles || {};
    const b = s.bytes_per_clk_sm || {};
    return [
      [lat, fmtFigures([l.local, l.neighbour, l.farthest], 'cycles')],
      [bw, `${fmtFigure(b.local)} / ${fmtFigure(b.remote)}`],
    ];
  });
}

/* The asynchronous copies (probes/async_copy.h), from the summary the
 * probe made of its points: each method's best bandwidth per level (the
 * size it was reached at, and against plain loads), and the one-copy
 * latency of each method at the sizes several methods share, so each row
 * compares the devices at one size. A result without a summary says so. */
function asyncPairs(ac) {
  if (!ac) return null;
  if (ac.error) return [['Asynchronous copies', `failed: ${ac.error}`]];
  const sum = ac.summary;
  if (!sum) return [['Summary', 'none in this result']];
  const pairs = [];
  for (const [level, where] of ASYNC_LEVELS) {
    for (const [m, label] of ASYNC_METHODS) {
      const b = sum[level]?.[m];
      if (!b) continue;
      const vs = m !== 'ld' && typeof b.vs_ld === 'number' ? ` (${fmtNum(b.vs_ld, 3)} × ld)` : '';
      pairs.push([`Best B/clk/SM, ${label}, ${where}`, `${fmtNum(b.best)} at ${fmtBytes(b.at_bytes)}${vs}`]);
    }
  }
  const sizes = Object.keys(sum.latency_by_bytes || {}).sort((a, b) => Number(a) - Number(b));
  for (const size of sizes) {
    for (const [m, label] of ASYNC_METHODS) {
      const v = sum.latency_by_bytes[size][m];
      if (typeof v === 'number') pairs.push([`${ASYNC_LATENCY}, ${asyncCopyBytes(Number(size))}, ${label}`, fmtNum(v)]);
    }
  }
  return pairs;
}

/* ---- control codes and the reuse cache --------------------------------------- */

/* The issue-order experiment (the control-code result's "scheduler"
 * meaning): its rule, then each experiment's rule and how often each policy
 * named the warp that issued next. */
function issueOrderPairs(sched) {
  if (!sched) return null;
  const pairs = [
    ['Issue order after a stall or yield', sched.rule || 'not determined'],
    ['Greedy (the issue stays with a warp that has work)', typeof sched.greedy === 'boolean' ? (sched.greedy ? 'yes' : 'no') : '—'],
  ];
  for (const [name, c] of Object.entries(sched.data?.by_experiment || {})) {
    pairs.push([`${name}: rule`, issueRuleText(c)]);
    pairs.push([`${name}: ${ISSUE_POLICIES.map(([, head]) => head.toLowerCase()).join(' / ')}`,
      ISSUE_POLICIES.map(([p]) => issueHits(c, p)).join(' · ')]);
  }
  return pairs;
}

/* The reuse cache (probes/banks_reuse.h, in the banks result): its rules,
 * how many questions it settled, the candidate designs the measurements
 * fit, and each question's outcome with the conflicts per period it rests
 * on (of the cleared control's). */
function reuseCachePairs(rc) {
  if (!rc) return null;
  if (rc.not_run) return [['Reuse cache', `not run: ${rc.not_run}`]];
  const qs = Array.isArray(rc.questions) ? rc.questions : [];
  return [
    ['Rules', el('ul', { class: 'rules' }, (rc.rules || []).map((r) => el('li', { text: r })))],
    ['Questions determined', `${rc.determined ?? '—'} of ${qs.length}`],
    ['Cache design', rc.answer ?? '—'],
    ...qs.map((q) => [q.asks, `${q.outcome} (${fmtNum(q.conflicts, 2)} of ${q.cleared_conflicts ?? '—'} conflicts a period)`]),
  ];
}
