// The URL hash codec: "#s=" + base64url(UTF-8 JSON of serialize(state)).
// Decoding never evaluates anything: base64 -> bytes -> JSON.parse -> validate().
import { serialize, validate } from './state.js';

const MAX_HASH = 1 << 20; // 1 MiB of hash text is far past any real state

function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('it is not base64url text');
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The hash (with '#') for a state. */
export function encodeHash(state) {
  return `#s=${toBase64Url(new TextEncoder().encode(JSON.stringify(serialize(state))))}`;
}

/**
 * Reads a location hash. Returns { state } for a good link, {} for no state
 * in the hash, or { error } (a sentence for the notice) for anything else.
 */
export function decodeHash(hash) {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  if (body === '') return {};
  if (body.length > MAX_HASH) return { error: 'the link is too long' };
  const m = /^s=(.*)$/s.exec(body);
  if (!m) return { error: 'the link’s hash is not an attnlab state' };
  let raw;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(m[1])));
  } catch {
    return { error: 'the link’s state is not valid encoded JSON' };
  }
  const r = validate(raw);
  return r.error ? { error: r.error } : r;
}
