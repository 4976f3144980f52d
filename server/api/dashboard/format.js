// Every number the dashboard shows, with its unit.

import { state } from "./history.js";

export const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
export const fmtInt = (n) => (n == null || !isFinite(n) ? "–" : intFmt.format(n));
export const plural = (n, one, many) => `${fmtInt(n)} ${n === 1 ? one : many}`;
export const fmtRate = (v, unit) => (v == null ? "–" : `${v.toFixed(v < 10 ? 2 : 1)} ${unit}`);
export function fmtBytes(b) {
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
export function fmtMicros(us) {
  if (us == null) return "–";
  if (us < 1000) return `${us} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(1)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}
export function fmtTime(unixSeconds) {
  if (!unixSeconds) return "–";
  return new Date(unixSeconds * 1000).toLocaleTimeString("en-GB", { hour12: false });
}
export function fmtDateTime(unixSeconds) {
  if (!unixSeconds) return "–";
  return `${new Date(unixSeconds * 1000).toISOString().replace("T", " ").slice(0, 19)} UTC`;
}
// An amount in the base token's subunits as "1 234.567890 IOTA".
export function fmtAmount(amount) {
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
