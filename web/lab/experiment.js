// The Run / Stop button of an experiment panel: a press runs `body(shouldStop,
// onFraction)` with a progress bar, a second press asks it to stop after its
// current chunk, errors go to `onError`; cancel() drops a run in progress (its
// results are not drawn: the caller checks `shouldStop`).
import { setText } from '../ui/dom.js';

export function createRunButton({ button, bar, onError, body }) {
  let running = false;
  let generation = 0;

  function reset() {
    running = false;
    bar.hidden = true;
    setText(button, 'Run');
  }

  async function run() {
    if (running) {
      running = false;
      return;
    }
    const mine = ++generation;
    running = true;
    setText(button, 'Stop');
    bar.hidden = false;
    bar.value = 0;
    const dropped = () => mine !== generation;
    try {
      await body({
        shouldStop: () => !running || dropped(),
        dropped,
        onFraction: (f) => { if (!dropped()) bar.value = f; },
      });
    } catch (err) {
      if (!dropped()) onError(err);
    } finally {
      if (!dropped()) reset();
    }
  }

  button.addEventListener('click', run);
  return {
    get running() { return running; },
    /** Drops a run in progress: it stops after its chunk and draws nothing. */
    cancel() {
      generation++;
      reset();
    },
  };
}
