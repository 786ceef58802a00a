// The text a saved transformer holds, read from its file. The engine keeps the
// text a 'text' model was made from in the file (so a loaded model draws the
// same sequences) but does not hand it back; the lab needs it to show in its
// text box, so that the box and the model agree and a new model from the same
// settings learns the same text. The layout is the one include/attnlab/transformer.h
// documents; the lab reads a file only after the engine has loaded it (every
// field and the checksum checked), and reads nothing it cannot account for.
// No DOM.

const TAG = 'ATNLTFM';
/** The versions the layout is the same in (2: a 'text' task's text cut into characters, not bytes). */
const VERSIONS = [1, 2];
/** magic (8) | u32 version | 11 × i32 (task .. steps) | u64 seed | u64 training stream: then u32 text length, the text. */
const TEXT_LENGTH_AT = 8 + 4 + 4 * 11 + 8 + 8;

/**
 * The text in a transformer file's bytes (a string; '' when the file holds
 * none), or null when the bytes are not a transformer file of a version it knows.
 */
export function savedText(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length < TEXT_LENGTH_AT + 4) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = String.fromCharCode(...bytes.subarray(0, TAG.length));
  if (tag !== TAG || bytes[TAG.length] !== 0 || !VERSIONS.includes(view.getUint32(8, true))) return null;
  const length = view.getUint32(TEXT_LENGTH_AT, true);
  if (TEXT_LENGTH_AT + 4 + length > bytes.length) return null;
  return new TextDecoder().decode(bytes.subarray(TEXT_LENGTH_AT + 4, TEXT_LENGTH_AT + 4 + length));
}
