// Small DOM helpers of the dashboard's modules.

export const $ = (sel) => document.querySelector(sel);

export function setText(sel, text) {
  const el = $(sel);
  if (el && el.textContent !== text) el.textContent = text;
}

export function cell(text, cls) {
  const td = document.createElement("td");
  if (text instanceof Node) td.appendChild(text);
  else td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

export function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}

export function yesNo(value) {
  const span = document.createElement("span");
  span.className = value ? "yes" : "no";
  span.textContent = value ? "yes" : "no";
  return span;
}
