// Each step's equation as a short list of TeX parts, from the few options that
// change it (mode, score, normalisation, whether τ ≠ 1, mask, trainable, several
// heads, the compare score). Numbers never enter the TeX (τ, L and the head count
// are symbols; their values are shown next to the controls), so the set is finite:
// allTex() lists every part, and scripts/vendor.mjs renders them with KaTeX at build
// time. The page ships the rendered HTML, not KaTeX. No DOM.
//
// Symbols, one meaning on every page: h is the number of heads (g = 0 … h − 1 indexes
// them, counted from 0 as every page counts heads and positions; d_h = d / h is a head's
// width), m is ALiBi's slope, H is kept for entropy, τ the temperature.

const B = (v) => `\\mathbf{${v}}`;

/** The options a formula depends on. */
export const formulaKey = (s) => ({
  mode: s.mode, score: s.score, normalize: s.normalize, tempered: s.mode === 'attend' && s.normalize === 'softmax' && s.temperature !== 1,
  mask: s.mask, trainable: s.trainable, multihead: s.mode === 'self' && s.heads > 1, compare: s.compare,
});

function maskTex(f) {
  if (f.mask === 'causal') return 'e_{ij} = -\\infty \\text{ for } j > i';
  if (f.mask === 'padding') return 'e_{ij} = -\\infty \\text{ for } j \\geq L';
  return null;
}

/** The superscript of e and α: a prime (the compared score), a head index (g), or both in one. */
function supOf(f, prime) {
  const head = f.mode === 'self' && f.multihead;
  // α'^{(g)} would be a double superscript: the prime joins the head's
  if (prime && head) return '^{\\prime(g)}';
  return head ? '^{(g)}' : prime;
}

function scoreTex(score, f, prime = '') {
  const e = `e${supOf(f, prime)}_{ij}`;
  const hd = f.mode === 'self' && f.multihead ? '^{(g)}' : '';
  const q = `${B('q')}${hd}_i`;
  const k = `${B('k')}${hd}_j`;
  switch (score) {
    case 'dot': return `${e} = {${q}}^{\\top} ${k}`;
    case 'scaled_dot': return `${e} = \\frac{{${q}}^{\\top} ${k}}{\\sqrt{${f.mode === 'self' ? 'd_h' : 'd'}}}`;
    case 'general': return `${e} = {${q}}^{\\top} W ${k}`;
    case 'additive': return `${e} = ${B('v')}^{\\top} \\tanh\\left(W_q ${q} + W_k ${k}\\right)`;
    case 'cosine': return `${e} = ${f.mode === 'self' ? '' : '\\beta\\,'}\\frac{${q} \\cdot ${k}}{\\lVert ${q} \\rVert\\,\\lVert ${k} \\rVert}`;
    case 'location': return `${e} = \\left(W ${q}\\right)_j`;
    default: return e;
  }
}

function weightTex(f, prime = '') {
  const sup = supOf(f, prime);
  const a = `\\alpha${sup}_{ij}`;
  const e = `e${sup}`;
  if (f.mode === 'attend' && f.normalize === 'sum') return `${a} = \\frac{${e}_{ij}}{\\sum_k ${e}_{ik}}`;
  const t = f.tempered ? '/\\tau' : '';
  return `${a} = \\frac{\\exp(${e}_{ij}${t})}{\\sum_k \\exp(${e}_{ik}${t})}`;
}

/** The TeX parts of a step's equation under formula options f (see formulaKey). */
export function texParts(step, f) {
  const self = f.mode === 'self';
  switch (step) {
    case 'q': case 'k': case 'v': {
      const M = step.toUpperCase();
      return [self && f.trainable ? `${M} = X W_${step}` : `${M} = X`];
    }
    case 'scores': return [scoreTex(f.score, f), ...(self ? [] : [`${B('q')}_i = ${B('k')}_i = ${B('x')}_i`]), maskTex(f)].filter(Boolean);
    case 'weights': return [weightTex(f)];
    case 'heads': return [`\\alpha^{(g)}_{ij},\\ g = 0 \\ldots h - 1`];
    case 'context': return [self && f.multihead
      ? `${B('z')}_i = \\big[\\textstyle\\sum_j \\alpha^{(g)}_{ij} ${B('v')}^{(g)}_j\\big]_{g=0}^{h-1}`
      : `${B('z')}_i = \\sum_j \\alpha_{ij}\\, ${B('v')}_j`];
    case 'output': return [`O = Z\\,W_o`];
    // the second score reads the same q and k as the first (in self-attention: the enlarged head's)
    case 'compare': return f.compare === 'none' ? [] : [scoreTex(f.compare, f, "'"), weightTex(f, "'")];
    case 'diff': return [self && f.multihead ? `\\Delta^{(g)}_{ij} = \\alpha^{\\prime(g)}_{ij} - \\alpha^{(g)}_{ij}` : `\\Delta_{ij} = \\alpha'_{ij} - \\alpha_{ij}`];
    default: return [];
  }
}

export const STEP_IDS = ['q', 'k', 'v', 'scores', 'weights', 'heads', 'context', 'output', 'compare', 'diff'];
const SCORES = ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location'];
const SELF_SCORES = ['dot', 'scaled_dot', 'cosine'];

/**
 * Every TeX part the page can show (for the build-time render): self-attention only with
 * its own scores, softmax at τ = 1 and no padding mask, as the state allows (fixup).
 */
export function allTex() {
  const out = new Set();
  for (const mode of ['attend', 'self']) {
    const self = mode === 'self';
    for (const score of self ? SELF_SCORES : SCORES) {
      for (const normalize of self ? ['softmax'] : ['softmax', 'sum']) {
        for (const tempered of self ? [false] : [false, true]) {
          for (const mask of self ? ['none', 'causal'] : ['none', 'causal', 'padding']) {
            for (const trainable of [false, true]) {
              for (const multihead of self ? [false, true] : [false]) {
                for (const compare of ['none', ...(self ? SELF_SCORES : SCORES)]) {
                  const f = { mode, score, normalize, tempered, mask, trainable, multihead, compare };
                  for (const step of STEP_IDS) for (const t of texParts(step, f)) out.add(t);
                }
              }
            }
          }
        }
      }
    }
  }
  return [...out];
}
