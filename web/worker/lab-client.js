// The page's side of the lab worker: call(action, args) returns a promise of
// the result, or rejects with an Error carrying the worker's message and .code.
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
      if (data.error) p.reject(Object.assign(new Error(data.error.message), { code: data.error.code }));
      else p.resolve(data.result);
    };
    const onError = (err) => {
      const error = new Error(`the lab worker failed: ${err?.message ?? err}`);
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
      this.worker.postMessage({ id, action, ...args }, transfer);
    });
  }

  terminate() {
    this.worker.terminate();
  }
}
