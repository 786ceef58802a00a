// The readout for one heatmap cell: the formula with its numbers filled in,
// e.g. the q·k terms of a score or the softmax numerator and denominator.
// Reads the state and the computed steps; no DOM. Positions (tokens) are counted from 0, as
// on every page (the lab, Learn, the sinusoid and RoPE angles); dimensions keep their names d1 … dn.
import { fixed, num } from '../ui/format.js';
import { alibiSlope, sinusoidTable } from '../ui/positions.js';
import { scoreName } from './state.js';

const SUB = '₀₁₂₃₄₅₆₇₈₉';
const sub = (k) => String(k).replace(/\d/g, (c) => SUB[c]);
const f4 = (v) => fixed(v, 4);
const paren = (v) => (v < 0 ? `(${num(v)})` : num(v));

/** "a₁×b₁ + a₂×b₂ + …", eliding the middle of long sums. */
function terms(pairs, max = 6) {
  const t = pairs.map(([a, b]) => `${paren(a)}×${paren(b)}`);
  if (t.length <= max) return t.join(' + ');
  return `${t.slice(0, 3).join(' + ')} + … + ${t[t.length - 1]}  (${t.length} terms)`;
}

const row = (m, i, from = 0, to = m.cols) => Array.from(m.data.subarray(i * m.cols + from, i * m.cols + to));
const dot = (a, b) => a.reduce((acc, v, k) => acc + v * b[k], 0);
const norm = (a) => Math.sqrt(dot(a, a));

function scoreLines(s, r, h, i, j, e) {
  const lo = h * r.headSize;
  const q = row(r.q, i, lo, lo + r.headSize);
  const k = row(r.k, j, lo, lo + r.headSize);
  const E = `e${sub(i)}${sub(j)}`;
  if (e === -Infinity) {
    const why = s.mask === 'padding' ? `padding: ${s.padLength ? `only keys 0…${s.padLength - 1} are` : 'no key is'} visible (L = ${s.padLength})` : `causal: query ${i} sees keys 0…${i}`;
    return [`${E} = −∞: the mask hides key ${j} from query ${i} (${why})`];
  }
  const qk = dot(q, k);
  switch (s.score) {
    case 'dot':
      return [`${E} = ${f4(e)} = q·k`, `= ${terms(q.map((v, c) => [v, k[c]]))}`];
    case 'scaled_dot':
      return [`${E} = ${f4(e)} = q·k / √${q.length}`, `q·k = ${terms(q.map((v, c) => [v, k[c]]))} = ${num(qk)}`, `= ${num(qk)} / ${num(Math.sqrt(q.length))}`];
    case 'cosine': {
      const beta = s.mode === 'self' ? 1 : s.beta;
      return [`${E} = ${f4(e)} = β q·k / (‖q‖ ‖k‖)`, `= ${num(beta)} × ${num(qk)} / (${num(norm(q))} × ${num(norm(k))})`];
    }
    case 'general': {
      const Wk = s.W.map((wr) => dot(wr, k));
      return [`${E} = ${f4(e)} = qᵀ W k = q·(W k)`, `W k = (${Wk.map(num).join(', ')})`, `= ${terms(q.map((v, c) => [v, Wk[c]]))}`];
    }
    case 'additive': {
      const u = s.Wq.map((wq, a) => dot(wq, q) + dot(s.Wk[a], k));
      return [`${E} = ${f4(e)} = vᵀ tanh(Wq q + Wk k)`, `Wq q + Wk k = (${u.map(num).join(', ')})`,
        `= ${terms(s.v.map((v, a) => [v, Math.tanh(u[a])]))}  (v × tanh)`];
    }
    case 'location':
      return [`${E} = ${f4(e)} = (W q)${sub(j)} = W${sub(j)}·q`, `= ${terms(s.L[j].map((w, c) => [w, q[c]]))}`];
    default:
      return [`${E} = ${f4(e)}`];
  }
}

function weightLines(s, r, h, i, j, a) {
  const n = r.weights[h].cols;
  const e = row(r.scores[h], i);
  const A = `α${sub(i)}${sub(j)}`;
  if (e[j] === -Infinity) return [`${A} = ${f4(a)}: masked`];
  if (s.mode === 'attend' && s.normalize === 'sum') {
    const total = e.reduce((acc, v) => acc + (v === -Infinity ? 0 : v), 0);
    return [`${A} = ${f4(a)} = e${sub(i)}${sub(j)} / Σₖ e${sub(i)}ₖ`, `= ${num(e[j])} / ${num(total)}`];
  }
  const tau = s.mode === 'attend' ? s.temperature : 1;
  const finite = e.filter((v) => v !== -Infinity);
  const big = Math.max(...finite) / tau > 40;
  const m = big ? Math.max(...finite) : 0;
  const ex = (v) => (v === -Infinity ? 0 : Math.exp((v - m) / tau));
  const den = e.reduce((acc, v) => acc + ex(v), 0);
  const arg = `${big ? `(e − ${num(m)})` : 'e'}${tau === 1 ? '' : ` / ${num(tau)}`}`;
  return [
    `${A} = ${f4(a)} = exp(${arg}) / Σₖ exp(${arg}ₖ)`,
    `= ${num(ex(e[j]))} / ${num(den)}  (over ${finite.length} of ${n} keys)`,
  ];
}

/** The lines for cell (i, j) of `step` in head h: { title, lines, value, contribution? }. */
export function explainCell(s, r, step, h, i, j) {
  const tok = s.tokens;
  const value = (m) => m.data[i * m.cols + j];
  switch (step) {
    case 'scores': {
      const e = value(r.scores[h]);
      if (s.mode === 'self' && s.positions === 'alibi' && e !== -Infinity) {
        // the bias comes after the score: explain q·k first, then what ALiBi adds
        const slope = alibiSlope(h, r.weights.length);
        const b = -slope * Math.abs(i - j) || 0;
        const [first, ...rest] = scoreLines(s, r, h, i, j, e - b);
        return { title: `${tok[i]} → ${tok[j]}`, value: e, lines: [`e${sub(i)}${sub(j)} = ${f4(e)} = score + ALiBi bias`, first, ...rest, `bias −m·|i − j| = −${num(slope)} × ${Math.abs(i - j)} = ${num(b)}`] };
      }
      return { title: `${tok[i]} → ${tok[j]}`, value: e, lines: scoreLines(s, r, h, i, j, e) };
    }
    case 'weights': {
      const a = value(r.weights[h]);
      const vj = row(r.v, j, h * (r.v.cols / r.weights.length), (h + 1) * (r.v.cols / r.weights.length));
      return {
        title: `${tok[i]} → ${tok[j]}`, value: a, lines: weightLines(s, r, h, i, j, a),
        contribution: `adds α·v${sub(j)} = (${vj.map((v) => num(a * v)).join(', ')}) to z${sub(i)}`,
      };
    }
    case 'context': {
      const z = value(r.context);
      const heads = r.weights.length;
      const hv = Math.floor(j / (r.v.cols / heads));
      const w = row(r.weights[hv], i);
      const vcol = Array.from({ length: r.v.rows }, (_, k) => r.v.data[k * r.v.cols + j]);
      return {
        title: `${tok[i]}, dim ${j + 1}`, value: z,
        lines: [`z${sub(i)},${sub(j + 1)} = ${f4(z)} = Σⱼ α${sub(i)}ⱼ v${sub(j + 1)}`.replace(/v(\S+)$/, `vⱼ,${sub(j + 1)}`), `= ${terms(w.map((a, k) => [a, vcol[k]]))}`],
      };
    }
    case 'q': case 'k': case 'v': {
      const m = r[step];
      const val = value(m);
      const W = s[`w${step}`];
      // sinusoidal positions are added to x before the projections
      const sin = s.mode === 'self' && s.positions === 'sinusoidal';
      const P = sin ? sinusoidTable(s.x.length, s.x[i].length) : null;
      const x = sin ? s.x[i].map((v, a) => v + P.data[i * P.cols + a]) : s.x[i];
      const xi = `${sin ? '(x + p)' : 'x'}${sub(i)}`;
      const lines = s.mode === 'self' && s.trainable
        ? [`${step}${sub(i)},${sub(j + 1)} = ${f4(val)} = Σₐ ${xi}ₐ W${step}ₐ,${sub(j + 1)}`, `= ${terms(x.map((xv, a) => [xv, W[a][j]]))}`]
        : [`${step}${sub(i)},${sub(j + 1)} = ${xi},${sub(j + 1)} = ${f4(val)}  (no projection)`];
      if (s.mode === 'self' && s.positions === 'rope' && step !== 'v') lines.push(`then rotated by RoPE: pairs of the head’s dims turn by ${i} × θₖ`);
      return { title: `${tok[i]}, dim ${j + 1}`, value: val, lines };
    }
    case 'output': {
      const o = value(r.output);
      const z = row(r.context, i);
      return {
        title: `${tok[i]}, dim ${j + 1}`, value: o,
        lines: [`O${sub(i)},${sub(j + 1)} = ${f4(o)} = Σₐ z${sub(i)}ₐ Woₐ,${sub(j + 1)}`, `= ${terms(z.map((zv, a) => [zv, s.wo[a][j]]))}`],
      };
    }
    case 'compare': {
      const b = value(r.compare.weights);
      return { title: `${tok[i]} → ${tok[j]}`, value: b, lines: [`α′${sub(i)}${sub(j)} = ${f4(b)} under ${scoreName(s.compare)}`] };
    }
    case 'diff': {
      const dv = value(r.compare.diff);
      const b = value(r.compare.weights);
      return { title: `${tok[i]} → ${tok[j]}`, value: dv, lines: [`Δα = α′ − α = ${num(b)} − ${num(b - dv)} = ${f4(dv)}`] };
    }
    default:
      return { title: '', value: NaN, lines: [] };
  }
}
