// Readings of an opened GPT-2 that the lab and Learn both show, from the worker's
// results (no model calls and no DOM here): the strongest heads of a score scan,
// how often each layer's logit lens already guesses the next token, and a token
// as a label shows it, and generated tokens as text.
import { readable } from '../engine/bpe.js';

/**
 * Generated tokens (their texts, as the lens names them: a byte that is not a whole character
 * on its own reads "<0xBD>") as one text in the lens's convention: the tokens' bytes joined, so a
 * character split over tokens reads whole, and a byte still not part of one reads "<0xBD>" (where
 * a plain decode shows "�").
 */
export function generatedText(tokens) {
  const bytes = [];
  const utf8 = new TextEncoder();
  for (const t of tokens) {
    for (const part of t.split(/(<0x[0-9A-F]{2}>)/)) {
      if (/^<0x[0-9A-F]{2}>$/.test(part)) bytes.push(parseInt(part.slice(3, 5), 16));
      else bytes.push(...utf8.encode(part));
    }
  }
  return readable(Uint8Array.from(bytes));
}

/** A GPT-2 token as a label: spaces, line ends and tabs made visible (" the" reads "␣the"). */
export const tokenLabel = (t) => t.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥');

/** The heads of a scan ([layer][head] -> { previousToken, induction }) by `key` score, highest first: [{ layer, head, value }]. */
export function rankHeads(scores, key) {
  return scores.flatMap((row, layer) => row.map((s, head) => ({ layer, head, value: s[key] }))).sort((a, b) => b.value - a.value);
}

/** The lens's guess at a cell: a token string, or { token } (either form reads). */
const guessOf = (g) => (typeof g === 'string' ? g : g?.token);

/**
 * Per layer, the share of positions whose logit-lens guess is the token that comes
 * next (inspect()'s { tokens, lens, predictions }), then the model's own output's:
 * [{ name, hit }] (layers first). Empty when the view has no lens or under two tokens.
 */
export function lensHits(view) {
  const { tokens, lens, predictions } = view;
  const n = tokens.length - 1;
  if (!lens || n < 1) return [];
  const share = (guess) => {
    let hit = 0;
    for (let t = 0; t < n; t++) if (guess(t) === tokens[t + 1]) hit++;
    return hit / n;
  };
  return [
    ...lens.map((row, layer) => ({ name: `after layer ${layer}`, hit: share((t) => guessOf(row[t])) })),
    { name: 'output', hit: share((t) => predictions[t]?.[0]?.token) },
  ];
}

/** evaluate()'s loss change in words: "+0.412 nats (2.310 → 2.722)". */
export function lossChange(before, after) {
  const d = after - before;
  return `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(3)} nats (${before.toFixed(3)} → ${after.toFixed(3)})`;
}
