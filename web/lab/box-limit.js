// A text box that holds at most what its link field holds (the property's
// maxLength: the transformer's input and prompt 256), or less where the model
// reads less (a text model's longest input):
// a longer paste is cut there, and a message under the box says what of it is
// used ("Using the first 256 of 10,000 characters"), instead of the browser's
// maxlength cutting it without a word.
import { h, setHidden, setText } from '../ui/dom.js';
import { cutText } from './transformer-text.js';
import { PROPERTIES } from './state.js';

/** Keeps `box` (an input whose id is a state property) to `most()` characters (its property's length), saying so when it cuts. */
export function limitBox(box, most = () => PROPERTIES[box.id].maxLength) {
  const said = h('p', { id: `${box.id}-cut`, className: 'field-message', hidden: true, dataset: { testid: `${box.id}-cut` }, attrs: { 'aria-live': 'polite' } });
  (box.closest('.field-row') ?? box.closest('.field')).after(said);
  box.setAttribute('aria-describedby', [box.getAttribute('aria-describedby'), said.id].filter(Boolean).join(' '));
  box.addEventListener('input', () => {
    const { text, message } = cutText(box.value, most());
    if (message) box.value = text;
    setText(said, message ?? '');
    setHidden(said, !message);
  });
}
