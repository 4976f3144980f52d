// Search and the detail views (block, transaction, output, milestone, address), routed by the
// URL's hash: #/block/<id>, #/transaction/<id>, #/output/<id>, #/milestone/<index>,
// #/address/<bech32>, #/search/<text>.

import { api } from "./api.js";
import { bech32Address } from "./bech32.js";
import { drawCharts, resizeCharts } from "./charts.js";
import { $, cell, link } from "./dom.js";
import { fmtAmount, fmtDateTime, fmtInt, fmtMicros, plural } from "./format.js";
import { state } from "./history.js";

const ADDRESS_OUTPUTS = 100;

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

export function setupSearch() {
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

export async function route() {
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
