// Every figure the prose quotes is written here, from what the engine computed
// at load: <span data-num="key"> in learn.html gets its text, and
// window.attnlabLearn.numbers[key] keeps the value so a test can compare the two.
import { setText } from '../ui/dom.js';

export const numbers = {};

/** Writes `text` into every [data-num=key] and records `value`. */
export function quote(key, value, text) {
  numbers[key] = value;
  for (const el of document.querySelectorAll(`[data-num="${key}"]`)) setText(el, text);
}

export const percent = (v) => `${(v * 100).toFixed(1)}%`;
