// What the page keeps: the node's last stats and 15 minutes of history for the charts.

export const HISTORY_S = 15 * 60;

export const state = {
  info: null,
  stats: null,
  prevStats: null,
  peerSamples: new Map(),
  history: {
    t: [],
    received: [],
    referenced: [],
    latest: [],
    confirmed: [],
    healthy: [],
    semiLazy: [],
    lazy: [],
    rss: [],
    dataDir: [],
    refusals: new Map(), // "status reason" -> per-second rates aligned with t
  },
  confirmations: new Map(), // milestone index -> {timestamp, referenced, confirmationUs}
};

export function record(stats) {
  const h = state.history;
  const t = stats.timeMs / 1000;
  const prev = state.prevStats;
  h.t.push(t);
  h.received.push(stats.blocks.perSecond);
  h.referenced.push(stats.blocks.referencedPerSecond);
  h.latest.push(stats.milestones.latest);
  h.confirmed.push(stats.milestones.confirmed);
  h.healthy.push(stats.tips.healthy);
  h.semiLazy.push(stats.tips.semiLazy);
  h.lazy.push(stats.tips.lazy);
  h.rss.push(stats.resources.residentMemoryBytes);
  h.dataDir.push(stats.resources.dataDirBytes);
  const dt = prev ? Math.max((stats.timeMs - prev.timeMs) / 1000, 0.001) : 1;
  const before = new Map();
  if (prev) for (const r of prev.refusals) before.set(`${r.status} ${r.reason}`, r.count);
  const seen = new Set();
  for (const r of stats.refusals) {
    const key = `${r.status} ${r.reason}`;
    seen.add(key);
    if (!h.refusals.has(key)) h.refusals.set(key, new Array(h.t.length - 1).fill(0));
    const rate = prev ? Math.max(r.count - (before.get(key) || 0), 0) / dt : 0;
    h.refusals.get(key).push(rate);
  }
  for (const [key, values] of h.refusals) if (!seen.has(key)) values.push(0);
  for (const c of stats.milestones.recent) state.confirmations.set(c.index, c);
  // Forget what is older than the window.
  const oldest = t - HISTORY_S;
  let drop = 0;
  while (drop < h.t.length && h.t[drop] < oldest) drop += 1;
  if (drop > 0) {
    for (const key of Object.keys(h)) {
      if (Array.isArray(h[key])) h[key].splice(0, drop);
    }
    for (const values of h.refusals.values()) values.splice(0, drop);
  }
  for (const [index, c] of state.confirmations) {
    if (c.timestamp < oldest) state.confirmations.delete(index);
  }
  state.prevStats = stats;
}
