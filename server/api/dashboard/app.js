// ledger-node dashboard. Plain JavaScript modules, no build step: it polls the node's own REST
// API (GET /api/dashboard/v1/stats every second, /api/core/v2/info, /api/core/v2/peers with a
// token) and keeps the last 15 minutes in the page. Charts are uPlot (vendored, MIT).

import { TOKEN_KEY, api } from "./api.js";
import { drawCharts, resizeCharts } from "./charts.js";
import { $ } from "./dom.js";
import { record, state } from "./history.js";
import { showInfo, showPeers, showStats } from "./panels.js";
import { route, setupSearch } from "./views.js";

const POLL_MS = 1000;

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
