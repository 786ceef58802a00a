// The lab's three families, and which one a state or a loaded model belongs to. No DOM.
import { imageFamily } from './family-images.js';
import { textFamily } from './family-text.js';
import { transformerFamily } from './family-transformer.js';

export const FAMILIES = [textFamily, imageFamily, transformerFamily];

/** The family of a state's task. */
export const familyOf = (state) => FAMILIES.find((f) => f.tasks.includes(state.task));

/** The family of a worker model kind ('seq2seq', 'vision', 'transformer'). */
export const familyOfKind = (kind) => FAMILIES.find((f) => f.kinds.includes(kind));
