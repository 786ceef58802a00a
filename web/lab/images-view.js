// The image family's views: the test image (its attention, glimpses and
// saliency; images.js), the drawing box and the soft / hard / none experiment
// (modes.js). The view interface (fill, clear, show, open, note, inputs,
// start, remakeOn) is the one every family's views have (main.js).
import { byId } from '../ui/dom.js';
import { createImageView } from './images.js';
import { createModesView } from './modes.js';
import { visionOptions } from './state.js';

/** page: { session, state, client, writeHash, onError(err, context) }. */
export function createImagesView({ session, state, client, writeHash, onError }) {
  const images = createImageView({
    read: (image) => session.read('readImage', { image }),
    example: async (seed) => (await session.examples(1, seed))[0],
    steps: () => session.steps,
    onError: (err) => onError(err, { doing: 'read' }),
  });
  const modes = createModesView({
    onError: (err) => onError(err, { doing: 'experiment' }),
    setup() {
      onError(null);
      session.pause();
      return { client, options: (mode) => visionOptions(state, mode), steps: state.modeSteps, batch: state.batch, lr: state.lr };
    },
  });

  const showImage = (seed) => {
    state.image = seed;
    writeHash();
    images.show(seed);
  };
  byId('image-example').addEventListener('click', () => showImage(1));
  byId('image-random').addEventListener('click', () => showImage(1 + Math.floor(Math.random() * (2 ** 31 - 2))));

  return {
    fill() {},
    clear() {
      images.clear();
      modes.clear();
      modes.label(state.task);
    },
    /** The test image read again by the model as it is now. */
    show: () => (session.kind === 'vision' ? images.refresh() : undefined),
    /** The model the session now holds, on the link's test image. */
    open: () => images.setModel(session.info.config, state.image),
    note() {},
    inputs: () => ({}),
    start: () => [],
    remakeOn: [],
  };
}
