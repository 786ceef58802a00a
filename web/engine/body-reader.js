// A response body read piece by piece into one buffer used again for every
// piece (engine.openModel's downloads and kept files, hub.js). The default
// reader hands each piece in a buffer of its own: fresh memory, which the
// process pays a page fault per 4 KB for, and on the project's virtual machine
// that was half of a kept GPT-2's second open (5.9 s with it, 3.1–3.9 s
// without: tests/bench/RESULTS.md, "Opening a model from the hub").
//   const reader = bodyReader(body)   { read() -> { done, value }, cancel(reason) }, as a stream's own reader
// A piece (value) is valid until the next read(): whoever keeps it copies it.

/** The most one piece holds: what one read of the stream gives, up to this. */
export const PIECE = 1 << 20;

/** A reader of body (a ReadableStream) that reads into one buffer where body is a byte stream (fetch's and Cache Storage's are). */
export function bodyReader(body, size = PIECE) {
  let byob;
  try {
    byob = body.getReader({ mode: 'byob' });
  } catch {
    return body.getReader(); // not a byte stream (Node's file streams): each piece as the stream gives it
  }
  let room = new ArrayBuffer(size);
  return {
    async read() {
      const got = await byob.read(new Uint8Array(room));
      if (got.value) room = got.value.buffer; // the memory comes back with the piece: moved, not copied
      return got.done ? { done: true, value: undefined } : got;
    },
    cancel: (reason) => byob.cancel(reason),
  };
}
