// The 'text' task's text box: what of the learner's text a new model learns,
// and what to tell them when it is not all of it, or none; and what of a text
// pasted into a shorter box (the input, the prompt) it keeps, said the same way. Lengths are in
// characters (code points), as the engine counts them; the bounds are the
// engine's (minText, maxVocabulary: limits.js) and the link's (the tfText
// property's maxLength). No DOM.
import { limit } from './limits.js';
import { PROPERTIES } from './state.js';

const count = (n) => n.toLocaleString('en');

/**
 * `value` cut to the `max` UTF-16 units a box holds (the link's bound), at a character:
 * { text, message }, message null when nothing was cut.
 */
export function cutText(value, max) {
  if (value.length <= max) return { text: value, message: null };
  const text = value.slice(0, max).replace(/[\uD800-\uDBFF]$/, '');
  return { text, message: `Using the first ${count(Array.from(text).length)} of ${count(Array.from(value).length)} characters: the most this box takes.` };
}

/**
 * The box's `value` read: { text, message }. text is what a new model learns
 * (null: none can be made from this box, and message says why); message is
 * null when the whole box is used as it is.
 */
export function readTextBox(value) {
  const minText = limit('minText', 'transformer');
  const maxVocabulary = limit('maxVocabulary', 'transformer');
  if (value === '') return { text: null, message: 'Type or paste a text: the model learns to continue it, one character at a time.' };
  // the link holds maxLength UTF-16 units: cut there, not inside a character
  const text = value.slice(0, PROPERTIES.tfText.maxLength).replace(/[\uD800-\uDBFF]$/, '');
  const chars = Array.from(text);
  if (chars.length < minText) {
    return {
      text: null,
      message: `This text has ${count(chars.length)} character${chars.length === 1 ? '' : 's'}; a model needs at least ${count(minText)} to learn from. Add some more.`,
    };
  }
  const kinds = new Set(chars).size;
  if (kinds > maxVocabulary) {
    return { text: null, message: `This text has ${count(kinds)} different characters; a model learns at most ${count(maxVocabulary)}. Try a text with fewer kinds of characters.` };
  }
  if (text === value) return { text, message: null };
  return { text, message: `Using the first ${count(chars.length)} of ${count(Array.from(value).length)} characters: the most a text can be here.` };
}
