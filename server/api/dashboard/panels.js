// The overview's text panels: header figures, milestones, refusals, peers.

import { TOKEN_KEY } from "./api.js";
import { $, cell, link, setText, yesNo } from "./dom.js";
import { fmtBytes, fmtInt, fmtMicros, fmtRate, fmtTime, plural } from "./format.js";
import { state } from "./history.js";

const MILESTONE_ROWS = 12;

export function showStats(stats) {
  setText("#lmi", fmtInt(stats.milestones.latest));
  setText("#cmi", fmtInt(stats.milestones.confirmed));
  setText("#blocks-total", plural(stats.blocks.received, "block", "blocks"));
  setText(
    "#now-blocks",
    `${fmtRate(stats.blocks.perSecond, "blk/s")} received, ${fmtRate(
      stats.blocks.referencedPerSecond,
      "blk/s"
    )} referenced`
  );
  setText(
    "#now-milestones",
    `LMI ${fmtInt(stats.milestones.latest)}, CMI ${fmtInt(stats.milestones.confirmed)}`
  );
  const last = stats.milestones.recent[stats.milestones.recent.length - 1];
  setText(
    "#now-confirmation",
    last ? `${fmtMicros(last.confirmationUs)} for ${fmtInt(last.index)}` : "none yet"
  );
  setText(
    "#now-tips",
    `${fmtInt(stats.tips.healthy)} healthy, ${fmtInt(stats.tips.semiLazy)} semi-lazy, ${fmtInt(
      stats.tips.lazy
    )} lazy`
  );
  setText(
    "#now-resources",
    `RSS ${fmtBytes(stats.resources.residentMemoryBytes)}, data ${fmtBytes(
      stats.resources.dataDirBytes
    )}`
  );
  const total = stats.refusals.reduce((sum, r) => sum + r.count, 0);
  setText("#now-refusals", `${fmtInt(total)} since start`);

  const ms = $("#milestones-table tbody");
  ms.textContent = "";
  const recent = stats.milestones.recent.slice(-MILESTONE_ROWS).reverse();
  for (const c of recent) {
    const tr = document.createElement("tr");
    tr.append(
      cell(link(`#/milestone/${c.index}`, fmtInt(c.index))),
      cell(fmtTime(c.timestamp)),
      cell(plural(c.referenced, "block", "blocks"), "num"),
      cell(fmtMicros(c.confirmationUs), "num")
    );
    ms.appendChild(tr);
  }
  if (!recent.length) {
    const tr = document.createElement("tr");
    const td = cell("No milestone confirmed since the node started.");
    td.colSpan = 4;
    tr.appendChild(td);
    ms.appendChild(tr);
  }

  const rt = $("#refusals-table tbody");
  rt.textContent = "";
  for (const r of stats.refusals) {
    const tr = document.createElement("tr");
    tr.append(cell(String(r.status)), cell(r.reason), cell(`${fmtInt(r.count)}×`, "num"));
    rt.appendChild(tr);
  }
  if (!stats.refusals.length) {
    const tr = document.createElement("tr");
    const td = cell("None.");
    td.colSpan = 3;
    tr.appendChild(td);
    rt.appendChild(tr);
  }
}

export function showInfo(info) {
  setText("#network", info.protocol.networkName);
  setText("#version", `${info.name} ${info.version}`);
  const health = $("#health");
  health.textContent = info.status.isHealthy ? "healthy" : "not healthy";
  health.className = info.status.isHealthy ? "yes" : "no";
}

// A peer is synced when it is connected and its heartbeat passes Hornet's rule, the one
// server/p2p/src/registry.rs (peer_is_synced) applies: its solid index at most two below the
// higher of its latest index and this node's confirmed index.
function peerSynced(peer, hb, cmi) {
  return (
    peer.connected &&
    hb.latestMilestoneIndex > 0 &&
    hb.solidMilestoneIndex >= Math.max(Math.max(hb.latestMilestoneIndex, cmi) - 2, 0)
  );
}

export function showPeers(result) {
  const note = $("#peers-note");
  const body = $("#peers-table tbody");
  const token = sessionStorage.getItem(TOKEN_KEY);
  const section = $("#peers");
  if (!token) {
    section.dataset.state = "token-needed";
    note.className = "note warn";
    note.textContent =
      "API token needed: /api/core/v2/peers is protected. Paste a token above (kept in this tab only).";
    body.textContent = "";
    return;
  }
  if (result.status === 401 || result.status === 403) {
    section.dataset.state = "token-refused";
    note.className = "note warn";
    note.textContent = `The token was refused (${result.status}): ${result.message}`;
    body.textContent = "";
    return;
  }
  if (result.status !== 200 || !Array.isArray(result.body)) {
    section.dataset.state = "error";
    note.className = "note warn";
    note.textContent = `Peers not available: ${result.message}`;
    return;
  }
  section.dataset.state = "listed";
  const peers = result.body;
  const now = performance.now() / 1000;
  const cmi = state.stats ? state.stats.milestones.confirmed : 0;
  note.className = "note";
  note.textContent = `${peers.filter((p) => p.connected).length} of ${peers.length} peers connected.`;
  body.textContent = "";
  for (const peer of peers) {
    const gossip = peer.gossip || null;
    const hb = (gossip && gossip.heartbeat) || {
      solidMilestoneIndex: 0,
      latestMilestoneIndex: 0,
      prunedMilestoneIndex: 0,
    };
    const m = (gossip && gossip.metrics) || {};
    const prev = state.peerSamples.get(peer.id);
    const rate = (key) => {
      if (!prev || m[key] == null || prev.m[key] == null) return "–";
      const dt = Math.max(now - prev.t, 0.001);
      return fmtRate(Math.max(m[key] - prev.m[key], 0) / dt, "/s");
    };
    state.peerSamples.set(peer.id, { t: now, m });
    const tr = document.createElement("tr");
    tr.dataset.peerId = peer.id;
    tr.dataset.connected = String(peer.connected);
    const synced = peerSynced(peer, hb, cmi);
    tr.dataset.synced = String(synced);
    const name = document.createElement("span");
    name.textContent = peer.alias ? `${peer.alias} ` : "";
    const id = document.createElement("span");
    id.className = "mono";
    id.textContent = `${peer.id.slice(0, 8)}…${peer.id.slice(-6)}`;
    id.title = peer.id;
    name.appendChild(id);
    tr.append(
      cell(name),
      cell(peer.relation),
      cell(yesNo(peer.connected)),
      cell(fmtInt(hb.solidMilestoneIndex), "num"),
      cell(fmtInt(hb.latestMilestoneIndex), "num"),
      cell(fmtInt(hb.prunedMilestoneIndex), "num"),
      cell(yesNo(synced)),
      cell(rate("newBlocks"), "num"),
      cell(rate("receivedBlocks"), "num"),
      cell(rate("sentBlocks"), "num"),
      cell(rate("receivedHeartbeats"), "num")
    );
    body.appendChild(tr);
  }
  if (!peers.length) {
    const tr = document.createElement("tr");
    const td = cell("No peers.");
    td.colSpan = 11;
    tr.appendChild(td);
    body.appendChild(tr);
  }
}
