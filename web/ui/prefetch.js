// Fetches started before the code that needs them runs (while an engine loads, say), each
// taken once by that code:
//   const files = createPrefetch(fetchBytes);
//   files.start(url)       begins fetcher(url) now (a failure is kept for take, not reported)
//   files.take(url)        the fetch started for url, or a new one when none was (or it was taken)
export function createPrefetch(fetcher) {
  const started = new Map();
  return {
    start(key) {
      if (started.has(key)) return;
      const result = fetcher(key);
      result.catch(() => {}); // seen by whoever takes it
      started.set(key, result);
    },
    take(key) {
      const result = started.get(key);
      started.delete(key);
      return result ?? fetcher(key);
    },
  };
}
