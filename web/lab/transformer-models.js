// The Transformer family's models in the lab: a new one from the settings or
// the pretrained one they pick, one from a file, and one kept from before,
// each with its settings put in the form and the link, and the one there was
// kept to go back to (main.js's backTo). When a model cannot be made, the one
// there was comes back. The views are the family's (transformer.js); the run
// bar and progress card are the lab's, redrawn through lab.shown().
import { PROPERTIES, codec } from './state.js';
import { modelName } from './model-status.js';
import { fetchPretrained, pickPretrainedTransformer, transformerSettings } from './pretrained.js';
import { savedText } from './transformer-file.js';
import { TF_MODEL_KEYS } from './transformer-state.js';

/** The pretrained transformer button's fields: any one of the task, whatever its sizes. */
export const ANY_SIZE = new Set();

/** The longest text the link (and so the text box) holds: the tfText property's. */
const TEXT_MAX = PROPERTIES.tfText.maxLength;

/** The note under the text box for a loaded model's text (null: none needed). */
function textNote(text, name) {
  if (text === null || text === '') return `${name} holds no text, so the box keeps the text you had; a new model from these settings learns that one.`;
  if (text.length > TEXT_MAX) {
    return `${name} was trained on a text of ${text.length.toLocaleString('en')} characters; the box shows its first `
      + `${TEXT_MAX.toLocaleString('en')}, which a new model from these settings would learn. The loaded model keeps its whole text.`;
  }
  return null;
}

/**
 * tf: the family (transformer.js); backTo: { previous } (the model kept to
 * go back to); lab: { keep(settings), pauseOther(), clearViews(), shown(),
 * manifest(), isTf() }, the page's parts these steps drive.
 */
export function createTransformerModels({ tf, state, client, controls, notice, writeHash, onError, backTo, lab }) {
  const models = {
    /** Where the transformer in hand came from: { pretrained } | { file } | {} (made here). */
    origin: {},

    /**
     * The transformer settings a pretrained model must match: the ones `given`
     * names (the link's, the one changed) and every one a link or the learner set
     * away from its default, so that opening the family on the default settings
     * opens the pretrained model, and chosen sizes are kept.
     */
    chosen(given) {
      if (given === ANY_SIZE) return given;
      const defaults = codec.defaults();
      return new Set([...given, ...TF_MODEL_KEYS.filter((k) => state[k] !== defaults[k])]);
    },

    /**
     * A new transformer from the settings, or the pretrained one when `given`
     * fields pick it; the model there was (of either family) is kept to go back
     * to. When the settings cannot make one, the engine's reason is shown and the
     * transformer there was comes back (`rollback`), or, from a link or another
     * family, the default one.
     */
    async make(rollback, given) {
      given = given && models.chosen(given);
      const before = backTo.previous;
      const kept = await lab.keep(rollback ?? state);
      if (kept) backTo.previous = kept;
      await lab.pauseOther();
      lab.clearViews();
      try {
        const pick = given ? pickPretrainedTransformer(lab.manifest(), state, given) : null;
        const bytes = pick ? await fetchPretrained(pick.spec).catch(() => null) : null;
        const made = bytes ? await client.call('load', { bytes }) : null;
        if (!lab.isTf()) { // another family was chosen meanwhile
          if (made) await client.call('destroy', { model: made.model });
          return false;
        }
        if (made) {
          Object.assign(state, pick.settings);
          controls.fill(state);
          tf.fill();
          await tf.adopt(made, state.tfInput);
          models.origin = { pretrained: pick };
        } else {
          await tf.newModel();
          models.origin = {};
        }
        if (!lab.isTf()) return false;
        lab.shown();
        return true;
      } catch (err) {
        onError(err, { doing: 'create' });
        if (kept?.state.task === 'transformer') {
          // the trained transformer there was comes back as it was
          backTo.previous = before;
          Object.assign(state, kept.state);
          controls.fill(state);
          tf.fill();
          writeHash();
          await tf.restore(kept.run, kept.bytes).catch(() => {});
          models.origin = kept.origin;
          lab.shown();
          return false;
        }
        // back to the (untrained) transformer there was; from a link or another family, to the default one
        let fallback = rollback?.task === 'transformer' ? rollback : null;
        if (!fallback) {
          const defaults = codec.defaults();
          fallback = { ...state, tfAblate: [] };
          for (const k of TF_MODEL_KEYS) fallback[k] = defaults[k];
          if (!rollback) notice.show(`The link's transformer could not be made (${err.message}), so the default one is shown.`, 'error');
        }
        Object.assign(state, fallback);
        controls.fill(state);
        tf.fill();
        writeHash();
        await tf.newModel().catch(() => {});
        models.origin = {};
        lab.shown();
        return false;
      }
    },

    /** Back to a transformer kept by lab.keep() (`target`: { run, bytes, origin }); its settings are already the state's. */
    async restore(target) {
      await lab.pauseOther();
      await tf.restore(target.run, target.bytes);
      models.origin = target.origin;
      lab.shown();
    },

    /**
     * The transformer the worker loaded from a file (`made`: its load answer,
     * `bytes`: the file's) opens the family with its settings, and with its
     * text in the text box (a 'text' model's), or a note saying why not.
     */
    async adoptFile(made, bytes, name, kept) {
      await lab.pauseOther();
      Object.assign(state, transformerSettings(made.config), { start: 'scratch', tfAblate: [] });
      let note = null;
      if (made.config.task === 'text') {
        const text = savedText(bytes);
        note = textNote(text, name);
        // cut at a character, not inside a surrogate pair (the link could not hold half of one)
        if (text) state.tfText = text.slice(0, TEXT_MAX).replace(/[\uD800-\uDBFF]$/, '');
      }
      controls.fill(state);
      tf.fill();
      writeHash();
      lab.clearViews();
      await tf.adopt(made);
      tf.textNote(note);
      models.origin = { file: name };
      if (kept) backTo.previous = kept;
      lab.shown();
      notice.show(`Loaded ${name}: ${modelName(state)}, ${made.steps} steps trained.`);
    },
  };
  return models;
}
