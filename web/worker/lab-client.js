// The page's side of the lab worker: call(action, args) returns a promise of
// the result, or rejects with an AttnlabError carrying the worker's message and .code.
import { AttnlabError } from '../engine/errors.js';

/** A result whose config's vocabulary came as one string and its texts' ends (lab-worker.js sendable) with the list again. */
function unpacked(result) {
  const v = result?.config?.vocabulary;
  if (v?.packed !== 'vocabulary') return result;
  const list = new Array(v.ends.length);
  for (let i = 0, at = 0; i < list.length; at = v.ends[i++]) list[i] = v.text.slice(at, v.ends[i]);
  return { ...result, config: { ...result.config, vocabulary: list } };
}

export class LabClient {
  /** worker: a Worker (browser) or a worker_threads Worker (Node). */
  constructor(worker) {
    this.worker = worker;
    this.pending = new Map();
    this.nextId = 1;
    const onMessage = (data) => {
      const p = this.pending.get(data?.id);
      if (!p) return;
      this.pending.delete(data.id);
      if (data.error) p.reject(new AttnlabError(data.error.code, data.error.message));
      else p.resolve(unpacked(data.result));
    };
    const onError = (err) => {
      const error = new AttnlabError('ERR_WORKER', `the lab worker failed: ${typeof err?.message === 'string' ? err.message : 'unknown error'}`);
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
    };
    if (typeof worker.on === 'function') {
      worker.on('message', onMessage);
      worker.on('error', onError);
    } else {
      worker.onmessage = (event) => onMessage(event.data);
      worker.onerror = (event) => onError(event.message ?? event);
    }
  }

  call(action, args = {}, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.worker.postMessage({ id, action, ...args }, transfer);
      } catch (err) {
        // A function, a Symbol or another value structured clone refuses: nothing was sent.
        this.pending.delete(id);
        reject(new AttnlabError('ERR_ARG', `${action}: the arguments cannot be sent to the lab worker (${err?.message ?? 'not cloneable'})`));
      }
    });
  }

  terminate() {
    this.worker.terminate();
  }
}
