// SHA-256 (FIPS 180-4) taken in pieces: a file is hashed as it arrives from
// the network, which crypto.subtle.digest (one whole buffer) cannot do without
// holding the file twice. The hub names a weights file by this hash.

const K = Int32Array.of(
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
);
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** An incremental SHA-256: update(bytes) any number of times, then digest() once. */
export class Sha256 {
  #h = Int32Array.from(H0);
  #w = new Int32Array(64);
  /** The bytes of a block not yet full, and how many it holds. */
  #block = new Uint8Array(64);
  #fill = 0;
  /** Bytes taken so far (below 2^53: the length field's high bits are this / 2^32). */
  #length = 0;
  #done = false;

  /** Takes the next bytes (a Uint8Array); returns this. */
  update(bytes) {
    if (this.#done) throw new Error('sha256: update after digest');
    let at = 0;
    const n = bytes.length;
    this.#length += n;
    if (this.#fill > 0) {
      const take = Math.min(64 - this.#fill, n);
      this.#block.set(bytes.subarray(0, take), this.#fill);
      this.#fill += take;
      at = take;
      if (this.#fill < 64) return this;
      this.#compress(this.#block, 0, 64);
      this.#fill = 0;
    }
    const whole = at + Math.floor((n - at) / 64) * 64;
    this.#compress(bytes, at, whole);
    at = whole;
    if (at < n) {
      this.#block.set(bytes.subarray(at), 0);
      this.#fill = n - at;
    }
    return this;
  }

  /** The 32-byte hash of everything taken; the hasher is spent. */
  digest() {
    if (this.#done) throw new Error('sha256: digest twice');
    const bits = this.#length * 8;
    // padding: 0x80, zeros to 56 mod 64, the bit length as a 64-bit big-endian number
    const pad = new Uint8Array((this.#fill < 56 ? 56 : 120) - this.#fill + 8);
    pad[0] = 0x80;
    const view = new DataView(pad.buffer);
    view.setUint32(pad.length - 8, Math.floor(bits / 2 ** 32));
    view.setUint32(pad.length - 4, bits >>> 0);
    this.#length -= pad.length; // the padding is not message
    this.update(pad);
    this.#done = true;
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setInt32(4 * i, this.#h[i]);
    return out;
  }

  /** digest() as 64 lowercase hex digits. */
  hex() {
    return Array.from(this.digest(), (b) => b.toString(16).padStart(2, '0')).join('');
  }

  /** The 64-byte blocks of `bytes` from `at` to `end` into the state (the state in locals for the run). */
  #compress(bytes, at, end) {
    const w = this.#w, h = this.#h;
    let h0 = h[0], h1 = h[1], h2 = h[2], h3 = h[3], h4 = h[4], h5 = h[5], h6 = h[6], h7 = h[7];
    for (; at < end; at += 64) {
      for (let i = 0, j = at; i < 16; i++, j += 4) {
        w[i] = (bytes[j] << 24) | (bytes[j + 1] << 16) | (bytes[j + 2] << 8) | bytes[j + 3];
      }
      for (let i = 16; i < 64; i++) {
        const x = w[i - 15], y = w[i - 2];
        // σ0(x) = ROTR7 ^ ROTR18 ^ SHR3, σ1(y) = ROTR17 ^ ROTR19 ^ SHR10
        const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
        const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
      }
      let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, k = h7;
      for (let i = 0; i < 64; i++) {
        // Σ1(e) = ROTR6 ^ ROTR11 ^ ROTR25, Ch(e, f, g); Σ0(a) = ROTR2 ^ ROTR13 ^ ROTR22, Maj(a, b, c)
        const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        const t1 = (k + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
        const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        k = g; g = f; f = e; e = (d + t1) | 0;
        d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
      h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + k) | 0;
    }
    h[0] = h0; h[1] = h1; h[2] = h2; h[3] = h3; h[4] = h4; h[5] = h5; h[6] = h6; h[7] = h7;
  }
}

/** The SHA-256 of bytes as 64 hex digits. */
export const sha256Hex = (bytes) => new Sha256().update(bytes).hex();
