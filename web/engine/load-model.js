// engine.loadModel(bytes, options): a saved model of whichever kind the file holds.
// The one place that reads a file's format tag (its first 8 bytes, "ATNL" and
// a kind, NUL-padded; the C savers write them, see include/attnlab/*.h) and
// hands the bytes to that kind's loader, which checks the rest; a safetensors
// file (an 8-byte header length, then '{') or a pytorch_model.bin (a zip) is a
// checkpoint (GPT-2 or GPT-NeoX), read with the config.json given in options
// ({ config, tokenizer }).
import { AttnlabError, argError, describe } from './errors.js';
import { isSafetensors, isTorchZip, loadCheckpoint } from './gpt2.js';
import { bytesView, toBytes } from './matrix.js';
import { loadSeq2Seq } from './seq2seq.js';
import { loadTransformer } from './transformer.js';
import { loadVisionModel } from './vision.js';

/** The files a model can be loaded from: format tag -> loader(heap, bytes) (may return a promise). */
const LOADERS = Object.freeze({
  ATNLTRN: loadSeq2Seq, // a seq2seq model with its task (trainer.h): Seq2SeqModel.save()
  ATNLVIS: loadVisionModel, // an image model (vision.h): VisionModel.save()
  ATNLTFM: loadTransformer, // a transformer with its task (transformer.h): TransformerModel.save()
});

/** attnlab files that are not models the engine loads, and what they are instead. */
const NOT_MODELS = Object.freeze({
  ATNLS2S: 'a bare seq2seq network without its task (the C core\'s s2s_save); load the file model.save() writes',
  ATNLDIG: 'the digit set of the image models, not a model',
});

const TAG_BYTES = 8;

/** The format tag of a file: its first 8 bytes up to the NUL, or null when they do not read as one. */
function formatTag(file) {
  if (file.length < TAG_BYTES || file[TAG_BYTES - 1] !== 0) return null;
  let tag = '';
  for (let i = 0; i < TAG_BYTES - 1 && file[i] !== 0; i++) {
    if (file[i] < 0x20 || file[i] > 0x7e) return null;
    tag += String.fromCharCode(file[i]);
  }
  return tag;
}

/**
 * The model a saved file holds, of its kind (a Seq2SeqModel, a VisionModel
 * or a TransformerModel), or a checkpoint (a TransformerModel of
 * config.architecture 'gpt2' or 'gpt_neox': a model.safetensors with
 * options.config, its config.json); anything else rejects with an AttnlabError.
 */
export async function loadModel(heap, bytes, options) {
  // a checkpoint is read where it is (its header and chunks are copied into WASM, then checked)
  const view = bytesView(bytes);
  if (view === null) throw argError(`loadModel: expected the bytes of a saved model (a Uint8Array or an ArrayBuffer), got ${describe(bytes)}`);
  if (view.length === 0) throw new AttnlabError('ERR_VALUE', 'loadModel: the file is empty');
  const tag = formatTag(view);
  const known = tag !== null && Object.hasOwn(LOADERS, tag);
  // an attnlab tag first: a damaged model file whose ninth byte is '{' stays a damaged model file
  if (!known && (isSafetensors(view) || isTorchZip(view))) return loadCheckpoint(heap, view, options);
  if (options !== undefined) throw argError('loadModel: options ({ config }) are for a checkpoint (model.safetensors); an attnlab model file takes none');
  if (known) return LOADERS[tag](heap, toBytes(bytes));
  if (tag !== null && Object.hasOwn(NOT_MODELS, tag)) throw new AttnlabError('ERR_VALUE', `loadModel: the file is ${NOT_MODELS[tag]}`);
  const kinds = Object.keys(LOADERS).join(', ');
  if (tag?.startsWith('ATNL')) throw new AttnlabError('ERR_VALUE', `loadModel: ${tag} is an attnlab file of a kind this engine does not load (it loads ${kinds})`);
  throw new AttnlabError('ERR_VALUE', `loadModel: not an attnlab model file (its first bytes are not one of the format tags ${kinds}) nor a safetensors checkpoint`);
}
