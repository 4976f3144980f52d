// ledger-node dashboard. Plain JavaScript, no build step: it polls the node's own REST API
// (GET /api/dashboard/v1/stats every second, /api/core/v2/info, /api/core/v2/peers with a
// token) and keeps the last 15 minutes in the page. Charts are uPlot (vendored, MIT).
"use strict";

(function () {
  const POLL_MS = 1000;
  const HISTORY_S = 15 * 60;
  const TOKEN_KEY = "ledger-node.api-token";
  const MILESTONE_ROWS = 12;
  const ADDRESS_OUTPUTS = 100;

  const $ = (sel) => document.querySelector(sel);

  // --- formatting: every number with its unit ----------------------------------------------
  const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  const fmtInt = (n) => (n == null || !isFinite(n) ? "–" : intFmt.format(n));
  const plural = (n, one, many) => `${fmtInt(n)} ${n === 1 ? one : many}`;
  const fmtRate = (v, unit) => (v == null ? "–" : `${v.toFixed(v < 10 ? 2 : 1)} ${unit}`);
  function fmtBytes(b) {
    if (b == null) return "–";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    let v = b;
    while (v >= 1024 && i < units.length - 1) {
      v /= 1024;
      i += 1;
    }
    return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
  }
  function fmtMicros(us) {
    if (us == null) return "–";
    if (us < 1000) return `${us} µs`;
    if (us < 1e6) return `${(us / 1000).toFixed(1)} ms`;
    return `${(us / 1e6).toFixed(2)} s`;
  }
  function fmtTime(unixSeconds) {
    if (!unixSeconds) return "–";
    return new Date(unixSeconds * 1000).toLocaleTimeString("en-GB", { hour12: false });
  }
  function fmtDateTime(unixSeconds) {
    if (!unixSeconds) return "–";
    return `${new Date(unixSeconds * 1000).toISOString().replace("T", " ").slice(0, 19)} UTC`;
  }
  // An amount in the base token's subunits as "1 234.567890 IOTA".
  function fmtAmount(amount) {
    const token = state.info && state.info.baseToken;
    const decimals = token ? token.decimals : 0;
    const unit = token ? token.unit : "";
    let n;
    try {
      n = BigInt(amount);
    } catch (_) {
      return String(amount);
    }
    const scale = 10n ** BigInt(decimals);
    const whole = intFmt.format(n / scale);
    const frac = decimals ? `.${(n % scale).toString().padStart(decimals, "0")}` : "";
    return `${whole}${frac} ${unit}`.trim();
  }

  // --- bech32 addresses (BIP-173 encoding; TIP-31 address types) ----------------------------
  const BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  function bech32Polymod(values) {
    const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
    let chk = 1;
    for (const v of values) {
      const top = chk >>> 25;
      chk = ((chk & 0x1ffffff) << 5) ^ v;
      for (let i = 0; i < 5; i += 1) if ((top >>> i) & 1) chk ^= gen[i];
    }
    return chk;
  }
  function bech32Encode(hrp, bytes) {
    const words = [];
    let acc = 0;
    let bits = 0;
    for (const b of bytes) {
      acc = (acc << 8) | b;
      bits += 8;
      while (bits >= 5) {
        bits -= 5;
        words.push((acc >>> bits) & 31);
      }
    }
    if (bits > 0) words.push((acc << (5 - bits)) & 31);
    const expand = [...hrp].map((c) => c.charCodeAt(0) >> 5).concat([0], [...hrp].map((c) => c.charCodeAt(0) & 31));
    const mod = bech32Polymod(expand.concat(words, [0, 0, 0, 0, 0, 0])) ^ 1;
    const checksum = [0, 1, 2, 3, 4, 5].map((i) => (mod >>> (5 * (5 - i))) & 31);
    return `${hrp}1${words.concat(checksum).map((w) => BECH32_CHARSET[w]).join("")}`;
  }
  // An address object of the API (`{"type":0,"pubKeyHash":…}`, alias 8, NFT 16) in bech32.
  function bech32Address(address) {
    const hrp = state.info && state.info.protocol.bech32Hrp;
    const hexId = address.pubKeyHash || address.aliasId || address.nftId;
    if (!hrp || !hexId) return null;
    const bytes = [address.type];
    for (let i = 2; i < hexId.length; i += 2) bytes.push(parseInt(hexId.slice(i, i + 2), 16));
    return bech32Encode(hrp, bytes);
  }

  // --- the node's API ------------------------------------------------------------------------
  async function api(path, withToken) {
    const headers = { Accept: "application/json" };
    const token = withToken ? sessionStorage.getItem(TOKEN_KEY) : null;
    if (token) headers.Authorization = `Bearer ${token}`;
    let response;
    try {
      response = await fetch(path, { headers, cache: "no-store", credentials: "omit" });
    } catch (e) {
      return { status: 0, body: null, message: "the node cannot be reached" };
    }
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    const message =
      body && body.error && body.error.message ? body.error.message : `HTTP ${response.status}`;
    return { status: response.status, body, message };
  }

  // --- state and history (15 minutes, kept in the page) --------------------------------------
  const state = {
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

  function record(stats) {
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

  // --- charts ----------------------------------------------------------------------------------
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  const palette = () => ["--s1", "--s2", "--s3", "--s4", "--s5", "--s6"].map(css);

  function chartSpec() {
    const h = state.history;
    const confirmations = [...state.confirmations.values()].sort((a, b) => a.index - b.index);
    const refusalKeys = [...h.refusals.keys()];
    return {
      blocks: {
        unit: (v) => fmtRate(v, "blk/s"),
        series: ["received", "referenced"],
        data: () => [h.t, h.received, h.referenced],
      },
      milestones: {
        unit: (v) => fmtInt(v),
        integer: true,
        // Indexes far from 0: the axis spans the window's own indexes.
        range: (min, max) => [Math.max((min || 0) - 2, 0), (max || 0) + 2],
        series: ["latest", "confirmed"],
        data: () => [h.t, h.latest, h.confirmed],
      },
      confirmation: {
        unit: fmtMicros,
        series: ["confirmation time"],
        points: true,
        data: () => [
          confirmations.map((c) => c.timestamp),
          confirmations.map((c) => c.confirmationUs),
        ],
      },
      tips: {
        unit: (v) => plural(v, "tip", "tips"),
        integer: true,
        series: ["healthy", "semi-lazy", "lazy"],
        data: () => [h.t, h.healthy, h.semiLazy, h.lazy],
      },
      resources: {
        unit: fmtBytes,
        series: ["resident memory", "data directory (right)"],
        // Memory and disk differ by orders of magnitude: the directory has its own axis.
        secondScale: true,
        data: () => [h.t, h.rss, h.dataDir],
      },
      refusals: {
        unit: (v) => fmtRate(v, "/s"),
        series: refusalKeys.length ? refusalKeys : ["none"],
        data: () =>
          refusalKeys.length
            ? [h.t, ...refusalKeys.map((k) => h.refusals.get(k))]
            : [h.t, h.t.map(() => 0)],
      },
    };
  }

  const charts = new Map(); // name -> {plot, seriesKey}

  // A y range from 0 (or a negative minimum) to 15 % above the maximum, at least 1.
  function headroom(min, max, integer) {
    const top = max > 0 ? max * 1.15 : 1;
    return [Math.min(0, min || 0), integer ? Math.max(Math.ceil(top), 1) : Math.max(top, 1)];
  }

  function plotSize(el) {
    const width = Math.max(el.clientWidth, 200);
    const height = window.matchMedia("(max-width: 640px)").matches ? 160 : 190;
    return { width, height };
  }

  function makePlot(name, spec) {
    const fig = document.getElementById(`chart-${name}`);
    const el = fig.querySelector(".plot");
    const colors = palette();
    const axis = {
      stroke: css("--muted"),
      grid: { stroke: css("--grid"), width: 1 },
      ticks: { stroke: css("--grid"), width: 1 },
    };
    // Whole numbers only on the axes of counts; 1-2-5 steps otherwise (uPlot's default).
    const integerIncrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7];
    const yAxis = (scale, side) => ({
      ...axis,
      scale,
      side,
      size: 80,
      incrs: spec.integer ? integerIncrs : undefined,
      values: (u, vals) => vals.map((v) => spec.unit(v)),
    });
    const axes = [
      { ...axis, space: 80, values: (u, vals) => vals.map((v) => fmtTime(v).slice(0, 5 + (vals.length > 1 && vals[1] - vals[0] < 60 ? 3 : 0))) },
      yAxis("y", 3),
    ];
    if (spec.secondScale) axes.push({ ...yAxis("y2", 1), grid: { show: false } });
    const opts = {
      ...plotSize(el),
      scales: { x: { time: true }, y: { range: (u, min, max) => (spec.range ? spec.range(min, max) : headroom(min, max, spec.integer)) } },
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      series: [
        {},
        ...spec.series.map((label, i) => ({
          label,
          scale: spec.secondScale && i === 1 ? "y2" : "y",
          stroke: colors[i % colors.length],
          width: 2,
          points: { show: Boolean(spec.points) },
          value: (u, v) => spec.unit(v),
        })),
      ],
      axes,
    };
    if (spec.secondScale) opts.scales.y2 = { range: (u, min, max) => headroom(min, max, false) };
    el.textContent = "";
    const plot = new uPlot(opts, spec.data(), el);
    charts.set(name, { plot, seriesKey: spec.series.join("\u0000") });
  }

  function drawCharts(rebuild) {
    if (typeof uPlot === "undefined") return;
    const specs = chartSpec();
    for (const [name, spec] of Object.entries(specs)) {
      const current = charts.get(name);
      if (rebuild || !current || current.seriesKey !== spec.series.join("\u0000")) {
        if (current) current.plot.destroy();
        makePlot(name, spec);
      } else {
        current.plot.setData(spec.data());
      }
      const fig = document.getElementById(`chart-${name}`);
      fig.dataset.points = String(spec.data()[0].length);
    }
  }

  function resizeCharts() {
    for (const [name, { plot }] of charts) {
      const el = document.getElementById(`chart-${name}`).querySelector(".plot");
      if (el.clientWidth > 0) plot.setSize(plotSize(el));
    }
  }

  // --- overview panels -------------------------------------------------------------------------
  function setText(sel, text) {
    const el = $(sel);
    if (el && el.textContent !== text) el.textContent = text;
  }

  function cell(text, cls) {
    const td = document.createElement("td");
    if (text instanceof Node) td.appendChild(text);
    else td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  function link(href, text) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function yesNo(value) {
    const span = document.createElement("span");
    span.className = value ? "yes" : "no";
    span.textContent = value ? "yes" : "no";
    return span;
  }

  function showStats(stats) {
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

  function showInfo(info) {
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

  function showPeers(result) {
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

  // --- polling ---------------------------------------------------------------------------------
  let ticks = 0;
  async function tick() {
    ticks += 1;
    const status = $("#status-line");
    const stats = await api("/api/dashboard/v1/stats", false);
    if (stats.status === 200 && stats.body) {
      state.stats = stats.body;
      record(stats.body);
      showStats(stats.body);
      if (!$("#overview").hidden) drawCharts(false);
      status.className = "status";
      status.textContent = `updated ${new Date().toLocaleTimeString("en-GB", { hour12: false })}`;
    } else {
      status.className = "status error";
      status.textContent = `stats: ${stats.message}`;
    }
    if (!state.info || ticks % 5 === 0) {
      const info = await api("/api/core/v2/info", false);
      if (info.status === 200 && info.body) {
        state.info = info.body;
        showInfo(info.body);
      }
    }
    if (sessionStorage.getItem(TOKEN_KEY)) showPeers(await api("/api/core/v2/peers", true));
    else showPeers({ status: 0 });
  }

  async function loop() {
    const started = performance.now();
    try {
      await tick();
    } finally {
      const wait = Math.max(POLL_MS - (performance.now() - started), 50);
      setTimeout(loop, wait);
    }
  }

  // --- token -----------------------------------------------------------------------------------
  function setupToken() {
    $("#token-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const input = $("#token-input");
      const token = input.value.trim().replace(/^Bearer\s+/i, "");
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
      input.value = "";
      state.peerSamples.clear();
      api("/api/core/v2/peers", true).then(showPeers);
    });
    $("#token-forget").addEventListener("click", () => {
      sessionStorage.removeItem(TOKEN_KEY);
      showPeers({ status: 0 });
    });
  }

  // --- search and detail views -----------------------------------------------------------------
  const HEX64 = /^(0x)?[0-9a-fA-F]{64}$/;
  const HEX68 = /^(0x)?[0-9a-fA-F]{68}$/;
  const BECH32 = /^[a-z0-9]{1,83}1[02-9ac-hj-np-z]{6,}$/;
  const hex = (q) => (q.startsWith("0x") ? q : `0x${q}`).toLowerCase();

  // What a query names, as the view to open, or null.
  function classify(query) {
    const q = query.trim();
    if (/^\d{1,10}$/.test(q)) return { kind: "milestone", id: String(Number(q)) };
    if (HEX64.test(q)) return { kind: "id32", id: hex(q) };
    if (HEX68.test(q)) return { kind: "output", id: hex(q) };
    if (BECH32.test(q.toLowerCase())) return { kind: "address", id: q.toLowerCase() };
    return null;
  }

  function setupSearch() {
    $("#search").addEventListener("submit", (e) => {
      e.preventDefault();
      const q = $("#search-input").value.trim();
      if (q) location.hash = `#/search/${encodeURIComponent(q)}`;
    });
  }

  function showOverview() {
    $("#detail").hidden = true;
    $("#overview").hidden = false;
    drawCharts(false);
    resizeCharts();
  }

  function openDetail(kind, id, title) {
    $("#overview").hidden = true;
    const detail = $("#detail");
    detail.hidden = false;
    detail.dataset.kind = kind;
    detail.dataset.id = id;
    detail.dataset.state = "loading";
    $("#detail-title").textContent = title;
    $("#detail-facts").textContent = "";
    $("#detail-extra").textContent = "";
    $("#detail-json").textContent = "loading…";
  }

  function fill(facts, json, extra) {
    const dl = $("#detail-facts");
    dl.textContent = "";
    for (const [key, label, value] of facts) {
      const dt = document.createElement("dt");
      dt.textContent = label;
      const dd = document.createElement("dd");
      dd.dataset.key = key;
      if (value instanceof Node) dd.appendChild(value);
      else dd.textContent = value == null ? "–" : String(value);
      dl.append(dt, dd);
    }
    const box = $("#detail-extra");
    box.textContent = "";
    if (extra) box.appendChild(extra);
    $("#detail-json").textContent = JSON.stringify(json, null, 2);
    $("#detail").dataset.state = "shown";
    $("#detail-title").focus();
  }

  function fail(message) {
    $("#detail-json").textContent = "";
    const p = document.createElement("p");
    p.className = "note warn";
    p.textContent = message;
    $("#detail-extra").textContent = "";
    $("#detail-extra").appendChild(p);
    $("#detail").dataset.state = "error";
  }

  const PAYLOAD_NAMES = { 5: "tagged data", 6: "transaction", 7: "milestone" };

  function inclusionOf(meta) {
    if (meta.ledgerInclusionState) {
      return meta.ledgerInclusionState === "conflicting"
        ? `conflicting (reason ${meta.conflictReason})`
        : meta.ledgerInclusionState;
    }
    return meta.referencedByMilestoneIndex ? "referenced" : "pending";
  }

  async function showBlock(id, viaTransaction) {
    const base = viaTransaction
      ? `/api/core/v2/transactions/${id}/included-block`
      : `/api/core/v2/blocks/${id}`;
    const [meta, block] = await Promise.all([api(`${base}/metadata`), api(base)]);
    if (meta.status !== 200) return meta;
    const m = meta.body;
    const b = block.status === 200 ? block.body : null;
    const parents = document.createElement("span");
    for (const p of m.parents || []) {
      parents.appendChild(link(`#/block/${p}`, `${p.slice(0, 10)}…${p.slice(-6)}`));
      parents.appendChild(document.createTextNode(" "));
    }
    const payload = b && b.payload ? PAYLOAD_NAMES[b.payload.type] || `type ${b.payload.type}` : "none";
    const facts = [];
    if (viaTransaction) facts.push(["transactionId", "transaction id", id]);
    facts.push(
      ["blockId", "block id", viaTransaction ? link(`#/block/${m.blockId}`, m.blockId) : m.blockId],
      ["inclusion", "inclusion state", inclusionOf(m)],
      [
        "referencedBy",
        "referenced by milestone",
        m.referencedByMilestoneIndex
          ? link(`#/milestone/${m.referencedByMilestoneIndex}`, fmtInt(m.referencedByMilestoneIndex))
          : "not yet",
      ],
      ["solid", "solid", m.isSolid ? "yes" : "no"],
      ["payload", "payload", payload],
      ["parents", "parents", parents]
    );
    if (m.milestoneIndex) facts.push(["milestoneIndex", "milestone", link(`#/milestone/${m.milestoneIndex}`, fmtInt(m.milestoneIndex))]);
    fill(facts, { metadata: m, block: b });
    return null;
  }

  function addressLink(address) {
    if (!address) return "–";
    const text = bech32Address(address);
    return text ? link(`#/address/${text}`, text) : JSON.stringify(address);
  }

  async function showOutput(id) {
    const r = await api(`/api/core/v2/outputs/${id}`);
    if (r.status !== 200) return r;
    const { metadata: md, output: o } = r.body;
    const address = (o.unlockConditions || []).find((u) => u.type === 0);
    fill(
      [
        ["outputId", "output id", id],
        ["amount", "amount", fmtAmount(o.amount)],
        ["type", "output type", { 3: "basic", 4: "alias", 5: "foundry", 6: "nft" }[o.type] || o.type],
        ["spent", "spent", md.isSpent ? `yes, in milestone ${fmtInt(md.milestoneIndexSpent)}` : "no"],
        ["booked", "booked in milestone", link(`#/milestone/${md.milestoneIndexBooked}`, fmtInt(md.milestoneIndexBooked))],
        ["blockId", "block", link(`#/block/${md.blockId}`, md.blockId)],
        ["transactionId", "transaction", link(`#/transaction/${md.transactionId}`, md.transactionId)],
        ["address", "address", addressLink(address ? address.address : null)],
      ],
      r.body
    );
    return null;
  }

  async function showMilestone(index) {
    const r = await api(`/api/core/v2/milestones/by-index/${index}`);
    if (r.status !== 200) return r;
    const ms = r.body;
    const changes = await api(`/api/core/v2/milestones/by-index/${index}/utxo-changes`);
    const c = state.confirmations.get(Number(index));
    const facts = [
      ["index", "index", fmtInt(ms.index)],
      ["time", "time", fmtDateTime(ms.timestamp)],
      ["referenced", "blocks referenced", c ? plural(c.referenced, "block", "blocks") : "not known (confirmed before this page opened)"],
      ["confirmation", "confirmation time", c ? fmtMicros(c.confirmationUs) : "–"],
      ["previous", "previous milestone id", ms.previousMilestoneId],
      ["parents", "parents", plural((ms.parents || []).length, "block", "blocks")],
    ];
    if (changes.status === 200) {
      facts.push([
        "utxo",
        "outputs",
        `${fmtInt(changes.body.createdOutputs.length)} created, ${fmtInt(changes.body.consumedOutputs.length)} consumed`,
      ]);
    }
    const nav = document.createElement("p");
    if (ms.index > 1) nav.append(link(`#/milestone/${ms.index - 1}`, "← previous"), " ");
    if (!state.stats || ms.index < state.stats.milestones.latest) {
      nav.append(link(`#/milestone/${ms.index + 1}`, "next →"));
    }
    fill(facts, { milestone: ms, utxoChanges: changes.body }, nav);
    return null;
  }

  async function showAddress(address) {
    const ids = [];
    let cursor = null;
    let ledgerIndex = null;
    for (let page = 0; page < 10 && ids.length < ADDRESS_OUTPUTS; page += 1) {
      const q = `address=${encodeURIComponent(address)}&pageSize=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const r = await api(`/api/indexer/v1/outputs/basic?${q}`);
      if (r.status !== 200) return r;
      ledgerIndex = r.body.ledgerIndex;
      ids.push(...r.body.items);
      cursor = r.body.cursor;
      if (!cursor) break;
    }
    const shown = ids.slice(0, ADDRESS_OUTPUTS);
    const outputs = await Promise.all(shown.map((id) => api(`/api/core/v2/outputs/${id}`)));
    let balance = 0n;
    const table = document.createElement("table");
    const head = document.createElement("thead");
    head.innerHTML = "<tr><th scope=\"col\">output id</th><th scope=\"col\" class=\"num\">amount</th><th scope=\"col\">booked</th></tr>";
    table.appendChild(head);
    const body = document.createElement("tbody");
    outputs.forEach((r, i) => {
      const tr = document.createElement("tr");
      if (r.status === 200) {
        balance += BigInt(r.body.output.amount);
        tr.append(
          cell(link(`#/output/${shown[i]}`, `${shown[i].slice(0, 12)}…${shown[i].slice(-8)}`)),
          cell(fmtAmount(r.body.output.amount), "num"),
          cell(fmtInt(r.body.metadata.milestoneIndexBooked))
        );
      } else {
        tr.append(cell(shown[i]), cell(r.message), cell(""));
      }
      body.appendChild(tr);
    });
    table.appendChild(body);
    const wrap = document.createElement("div");
    wrap.className = "scroll";
    wrap.appendChild(table);
    const more = cursor || ids.length > ADDRESS_OUTPUTS;
    fill(
      [
        ["address", "address", address],
        ["balance", more ? `balance of the first ${ADDRESS_OUTPUTS} basic outputs` : "balance (basic outputs)", fmtAmount(balance.toString())],
        ["outputs", "unspent basic outputs", `${fmtInt(ids.length)}${more ? "+" : ""}`],
        ["ledgerIndex", "at ledger index", fmtInt(ledgerIndex)],
      ],
      { address, ledgerIndex, outputIds: ids },
      wrap
    );
    return null;
  }

  async function route() {
    let hash;
    try {
      hash = decodeURIComponent(location.hash.replace(/^#\/?/, ""));
    } catch (_) {
      hash = `search/${location.hash.replace(/^#\/?(search\/)?/, "")}`;
    }
    const slash = hash.indexOf("/");
    const kind = slash < 0 ? hash : hash.slice(0, slash);
    const arg = slash < 0 ? "" : hash.slice(slash + 1);
    if (!kind) {
      showOverview();
      return;
    }
    if (kind === "search") {
      const what = classify(arg);
      if (!what) {
        openDetail("search", arg, `Search: ${arg}`);
        fail(
          "Not a block id, transaction id (0x + 64 hex digits), output id (0x + 68 hex digits), milestone index or bech32 address."
        );
        return;
      }
      if (what.kind !== "id32") {
        location.replace(`#/${what.kind}/${what.id}`);
        return;
      }
      // A 32-byte id: a block, else a transaction, else a milestone id.
      openDetail("search", what.id, `Looking up ${what.id}`);
      const block = await api(`/api/core/v2/blocks/${what.id}/metadata`);
      if (block.status === 200) {
        location.replace(`#/block/${what.id}`);
        return;
      }
      const tx = await api(`/api/core/v2/transactions/${what.id}/included-block/metadata`);
      if (tx.status === 200) {
        location.replace(`#/transaction/${what.id}`);
        return;
      }
      const ms = await api(`/api/core/v2/milestones/by-id/${what.id}`);
      if (ms.status === 200 && ms.body) {
        location.replace(`#/milestone/${ms.body.index}`);
        return;
      }
      fail(`No block, transaction or milestone with id ${what.id} on this node.`);
      return;
    }
    const titles = {
      block: "Block",
      transaction: "Transaction",
      output: "Output",
      milestone: "Milestone",
      address: "Address",
    };
    if (!titles[kind]) {
      openDetail(kind, arg, "Unknown view");
      fail(`No view called ${kind}.`);
      return;
    }
    openDetail(kind, arg, `${titles[kind]} ${arg}`);
    const shows = {
      block: (id) => showBlock(id, false),
      transaction: (id) => showBlock(id, true),
      output: showOutput,
      milestone: showMilestone,
      address: showAddress,
    };
    const problem = await shows[kind](arg);
    if (problem) fail(`${titles[kind]} ${arg}: ${problem.message}`);
  }

  // --- start -----------------------------------------------------------------------------------
  function start() {
    setupToken();
    setupSearch();
    window.addEventListener("hashchange", route);
    window.addEventListener("resize", resizeCharts);
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => drawCharts(true));
    document.addEventListener("keydown", (e) => {
      if (e.key === "/" && document.activeElement.tagName !== "INPUT") {
        e.preventDefault();
        $("#search-input").focus();
      } else if (e.key === "Escape" && !$("#detail").hidden) {
        location.hash = "#/";
      }
    });
    route();
    loop();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
