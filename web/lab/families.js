// The lab's three families, which one a state or a loaded model belongs to, and a state's link. No DOM.
import { imageFamily } from './family-images.js';
import { textFamily } from './family-text.js';
import { transformerFamily } from './family-transformer.js';
import { codec } from './state.js';

export const FAMILIES = [textFamily, imageFamily, transformerFamily];

/** The family of a state's task. */
export const familyOf = (state) => FAMILIES.find((f) => f.tasks.includes(state.task));

/** The family of a worker model kind ('seq2seq', 'vision', 'transformer'). */
export const familyOfKind = (kind) => FAMILIES.find((f) => f.kinds.includes(kind));

/**
 * The link of a state: its family's settings only (family.linkKeys), so a
 * transformer's link carries no seq2seq or image field, nor theirs a transformer's.
 */
export function linkOf(state) {
  return codec.encode(Object.fromEntries(familyOf(state).linkKeys.map((k) => [k, state[k]])));
}
