// The names list's split as the engine draws it (src/tasks/sequence_data.c:
// a name is a test name when (FNV-1a 64 of its bytes >> 32) mod 100 < 10),
// and a character bigram model's loss on it: the baseline a trained model must beat.
const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;
export const NAMES_TEST_PERCENT = 10;

export function isTestName(name) {
  let h = FNV64_OFFSET;
  for (const b of new TextEncoder().encode(name)) h = ((h ^ BigInt(b)) * FNV64_PRIME) & MASK;
  return Number((h >> 32n) % 100n) < NAMES_TEST_PERCENT;
}

/** { train: string[], test: string[] } of a list's text (one name per line). */
export function splitNames(text) {
  const names = text.split(/\r?\n/).filter(Boolean);
  return { train: names.filter((n) => !isTestName(n)), test: names.filter(isTestName) };
}

/**
 * Nats per character (the end of a name one of them) on the test names of a
 * bigram model p(next | previous) fitted to the train names, add-one smoothed.
 */
export function bigramLoss(text) {
  const { train, test } = splitNames(text);
  const END = '\n';
  const symbols = [...new Set([END, ...train.join('')])];
  const counts = new Map();
  const walk = (name, fn) => {
    let prev = END;
    for (const ch of [...name, END]) {
      fn(prev, ch);
      prev = ch;
    }
  };
  for (const name of train) walk(name, (a, b) => counts.set(a + b, (counts.get(a + b) ?? 0) + 1));
  const totals = new Map();
  for (const [pair, c] of counts) totals.set(pair[0], (totals.get(pair[0]) ?? 0) + c);
  let loss = 0;
  let n = 0;
  for (const name of test) {
    walk(name, (a, b) => {
      loss -= Math.log(((counts.get(a + b) ?? 0) + 1) / ((totals.get(a) ?? 0) + symbols.length));
      n++;
    });
  }
  return { test: loss / n, trainNames: train.length, testNames: test.length };
}
