// Bech32 addresses (BIP-173 encoding; TIP-31 address types) for the output view.

import { state } from "./history.js";

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
export function bech32Address(address) {
  const hrp = state.info && state.info.protocol.bech32Hrp;
  const hexId = address.pubKeyHash || address.aliasId || address.nftId;
  if (!hrp || !hexId) return null;
  const bytes = [address.type];
  for (let i = 2; i < hexId.length; i += 2) bytes.push(parseInt(hexId.slice(i, i + 2), 16));
  return bech32Encode(hrp, bytes);
}
