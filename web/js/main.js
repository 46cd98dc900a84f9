/*
 * The router: every view has an address (a deep link) in the hash, because
 * the daemon serves the dashboard at "/" only:
 *   #/                          overview: devices, jobs, submission, import
 *   #/?job=ID  (or #job=ID)     the same with job ID opened
 *   #/device/UUID/VIEW[?job=ID] a device's result (latency, memory, banks,
 *                               control-codes, dual-issue, model-validation)
 *   #/compare/VIEW[?devices=U,U] devices side by side
 *   #/occupancy[?cc=|device=&block=&regs=&smem=]
 *   #/predict[?device=UUID]     a kernel's time by the model on that device
 *   #/traces
 *   #/fleet[?model=M&host=H]    every GPU compared with its model's peers
 *   #/fleet/distribution?model=M&metric=NAME[&device=UUID]  one figure's
 *                               distribution, the device marked
 * A view is rendered by an async function(main, route, ctx); ctx.alive()
 * turns false once the address changed again, so a slow answer for an old
 * view is dropped. When a view has drawn its data, #view gets
 * data-ready="NAME" and data-ready-ms (milliseconds since the page started
 * loading): the browser test waits for it and reports it as the load time.
 * A view whose data could not be had (the daemon unreachable) throws: its
 * place shows the failure instead and #view gets data-failed="NAME", never
 * data-ready, so nothing takes it for loaded.
 */

const VIEWS = {
  overview: { render: renderOverview, leave: leaveOverview, title: () => 'Overview' },
  device: { render: renderDevice, title: (r) => VIEW_TITLES[r.parts[2]] || 'Device' },
  compare: { render: renderCompare, title: (r) => `Compare ${COMPARE_VIEWS[r.parts[1]] || ''}` },
  occupancy: { render: renderOccupancy, title: () => 'Occupancy calculator' },
  predict: { render: renderPredict, title: () => 'Kernel-time predictor' },
  traces: { render: renderTraces, title: () => 'Traces' },
  fleet: { render: renderFleet, title: (r) => (r.parts[1] === 'distribution' ? 'Fleet distribution' : 'Fleet') },
};

const router = { generation: 0, leave: null };

function currentRoute() {
  const legacy = /^#job=(\d+)$/.exec(window.location.hash);
  if (legacy) return { parts: [], query: new URLSearchParams(), legacyJob: Number(legacy[1]) };
  return parseHash(window.location.hash);
}

/* "device/memory", "compare/latency", "overview", ... */
function readyName(route) {
  const name = route.parts[0] || 'overview';
  if (name === 'device') return `device/${RESULT_RENDERERS[route.parts[2]] ? route.parts[2] : 'latency'}`;
  if (name === 'compare') return `compare/${COMPARE_VIEWS[route.parts[1]] ? route.parts[1] : 'memory'}`;
  if (name === 'fleet') return route.parts[1] === 'distribution' ? 'fleet/distribution' : 'fleet';
  return name;
}

/* The previous view is gone at once: its charts are already destroyed, and
 * its data must not pass for the new address's while that loads. */
function showLoading(main) {
  main.replaceChildren(el('p', { class: 'hint', text: 'Loading…' }));
}

/* A view that could not load: the failure in its place, not marked ready. */
function showFailure(main, title, route, err) {
  main.replaceChildren(el('section', {}, el('h2', { text: title }),
    el('p', { class: 'empty bad', role: 'alert', text: err.message })));
  main.dataset.failed = readyName(route);
  setStatus(err.message, true);
}

function markReady(name) {
  const main = $('view');
  main.dataset.ready = name;
  main.dataset.readyMs = String(Math.round(performance.now()));
  main.dataset.readyCount = String(Number(main.dataset.readyCount || 0) + 1);
}

async function navigate() {
  router.generation += 1;
  const generation = router.generation;
  const ctx = { alive: () => generation === router.generation };
  if (router.leave) router.leave();
  router.leave = null;
  destroyCharts();

  const route = currentRoute();
  const name = route.parts[0] || 'overview';
  const view = VIEWS[name];
  const main = $('view');
  main.dataset.ready = '';
  delete main.dataset.failed;
  for (const a of document.querySelectorAll('#nav a')) {
    a.toggleAttribute('aria-current', a.dataset.nav === name);
  }
  if (!view) {
    document.title = 'gpuprobe · No such page';
    setStatus('No such page.', shared.offline); // nothing asked: the connection's state stays
    main.replaceChildren(el('section', {}, el('h2', { text: 'No such page' }),
      el('p', {}, `Nothing is at “${window.location.hash}”. `, el('a', { href: '#/', text: 'Back to the overview' }))));
    markReady('unknown');
    return;
  }
  const title = view.title(route);
  document.title = `gpuprobe · ${title}`;
  router.leave = view.leave || null;
  showLoading(main);
  try {
    await view.render(main, route, ctx);
  } catch (e) {
    if (ctx.alive()) showFailure(main, title, route, e);
    return;
  }
  if (ctx.alive()) markReady(readyName(route));
}

async function loadVersion() {
  try {
    const h = await api('/healthz');
    $('version').textContent = h.version || '—';
  } catch {
    $('version').textContent = '—';
  }
}

function init() {
  initCharts();
  initToken();
  loadVersion();
  loadInventory().catch(() => {}); // the header's host and driver on every view
  window.addEventListener('hashchange', () => {
    window.scrollTo(0, 0);
    navigate();
  });
  navigate();
}

document.addEventListener('DOMContentLoaded', init);
