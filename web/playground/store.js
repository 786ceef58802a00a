// Owns the one state object. Views ask for changes through update()/replace();
// every change is fixed up (state.js invariants) and announced to listeners with
// { source, structural } so views can skip work the change cannot affect.
import { fixup } from './state.js';

export function createStore(initial) {
  let state = initial;
  const listeners = [];
  const emit = (info) => { for (const fn of listeners) fn(state, info); };
  return {
    get state() { return state; },
    /** Mutates the state with fn(state); info.source names the view that made the change. */
    update(fn, info = {}) {
      fn(state);
      fixup(state);
      emit(info);
    },
    /** Swaps in a whole new (valid) state: a preset, a link or an imported file. */
    replace(next, info = {}) {
      state = fixup(next);
      emit({ ...info, structural: true });
    },
    subscribe(fn) { listeners.push(fn); },
  };
}
