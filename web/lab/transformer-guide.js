// What each transformer task's results mean (no DOM): the pattern its maps
// show once it has learned, which positions training scores (the answer's,
// marked in the logit lens), and Generate's check of an answer against the
// true one, for the tasks with one right answer.

/** Tasks whose sequences are a prompt and its one right answer (induction's: the rest of the repeated segment): Generate stops at the answer and checks it. */
export const ANSWER_TASKS = ['copy', 'reverse', 'sort', 'dates', 'modular', 'induction'];

/** The pattern to look for in the maps, per task (a task the engine gains has none yet). */
export const TASK_PATTERNS = {
  induction: 'Look for the induction stripe: in the segment\'s second occurrence each token looks one position after '
    + 'the same token\'s earlier occurrence, a diagonal line parallel to the main one (a layer-1 head); a layer-0 head looks at the previous token, '
    + 'the line just under the main diagonal.',
  copy: 'Look for the shifted diagonal: each answer position looks back by the input\'s length, at the input symbol it writes next.',
  reverse: 'Look for the anti-diagonal: as the answer is written, each position looks at the input symbol mirrored across the “=”, '
    + 'from the last one back to the first.',
  sort: 'Look at the answer rows: each looks at the input symbols still to be written, the smallest first.',
  dates: 'Look at the answer rows: the year\'s digits look at the date\'s year, then the month\'s at its month (a word or a number), then the day\'s at its day.',
  modular: 'Look at the last row (“=”): it must look at both numbers, a and b, to write a + b mod 31.',
  text: 'Look for a previous-token head (the line just under the diagonal) and, on a text that repeats itself, induction stripes.',
  names: 'Look for a previous-token head (the line just under the diagonal): a name\'s next letter depends most on the last few.',
};

/**
 * The positions training scores in a sequence of `promptTokens` prompt tokens
 * followed by `answerTokens` answer tokens, of which `n` are shown: position t
 * is scored when it predicts an answer token (the prompt's last one predicts
 * the first). A Set of positions.
 */
export function scoredPositions(promptTokens, answerTokens, n) {
  const out = new Set();
  for (let t = promptTokens - 1; t < Math.min(n, promptTokens - 1 + answerTokens); t++) if (t >= 0) out.add(t);
  return out;
}

/** Generate's answer (its tokens) against the true one (`truth`, written `said`): { right, text } ("✓ right", "✗ the answer is 2042-05-20"). */
export function verdict(tokens, truth, said = truth.join('')) {
  const right = tokens.length === truth.length && tokens.every((t, k) => t === truth[k]);
  return { right, text: right ? '✓ right' : `✗ the answer is ${said}` };
}

/** The shortest repeat outlined on the maps: shorter ones happen by chance in random letters. */
export const MIN_REPEAT = 4;

/**
 * The longest stretch of `tokens` that occurs again later ({ first, second, length }: the
 * positions of its two occurrences), and where an induction head looks from each
 * position of the second occurrence but its last: one position after the same token's
 * earlier occurrence ([query, key] pairs, the stripe parallel to the diagonal). null when
 * nothing of MIN_REPEAT tokens or more repeats.
 */
export function repeatOf(tokens) {
  const n = tokens.length;
  let best = null;
  for (let d = 1; d < n; d++) {
    // runs of equal tokens at distance d: tokens[i] === tokens[i - d]
    for (let i = d, run = 0; i <= n; i++) {
      if (i < n && tokens[i] === tokens[i - d]) { run++; continue; }
      if (run > (best?.length ?? MIN_REPEAT - 1) && run <= d) best = { first: i - run - d, second: i - run, length: run };
      run = 0;
    }
  }
  if (!best) return null;
  const d = best.second - best.first;
  const stripe = [];
  for (let q = best.second; q < best.second + best.length - 1; q++) stripe.push([q, q - d + 1]);
  return { ...best, stripe };
}
