// A checkpoint's files carried from one page of the site to another (chapter
// 10's "Open this model in the lab"): the File objects the reader chose are put
// in this browser's IndexedDB (the browser keeps their bytes on this computer;
// nothing is sent anywhere), the link opens the lab with ?model=kept, and the lab
// takes them once: they are removed as they are read. A File cannot go through a
// URL, and a 548 MB checkpoint is far past what localStorage holds (handoff.js).
//   keepCheckpoint(files)   files: File[] (the weights, config.json, tokenizer.json)
//   takeCheckpoint()        File[] | null (nothing kept); throws when the browser keeps no storage
const DB = 'attnlab-checkpoint';
const STORE = 'files';
const KEY = 'kept';
/** At most this many files are kept: the weights, the config and the tokenizer. */
const MAX_FILES = 3;

function database() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('this browser keeps no storage for the site'));
  });
}

/** One transaction on the store; resolves with the request's result once it is committed. */
async function run(mode, act) {
  const db = await database();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = act(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error('the browser would not keep the files'));
    });
  } finally {
    db.close();
  }
}

export async function keepCheckpoint(files) {
  const list = [...files].slice(0, MAX_FILES);
  await run('readwrite', (store) => store.put({ files: list, at: Date.now() }, KEY));
}

export async function takeCheckpoint() {
  const got = await run('readwrite', (store) => {
    const req = store.get(KEY);
    req.onsuccess = () => store.delete(KEY);
    return req;
  });
  const files = got?.files;
  if (!Array.isArray(files)) return null;
  // the site's storage is anyone's on this origin to write: only files are taken, and the widget checks them as any file
  const kept = files.slice(0, MAX_FILES).filter((f) => f instanceof File);
  return kept.length ? kept : null;
}
