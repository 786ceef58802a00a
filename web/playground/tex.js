// Each step's equation as a short list of TeX parts, from the few options that
// change it (mode, score, normalisation, whether τ ≠ 1, mask, trainable, several
// heads, the compare score). Numbers never enter the TeX (τ, L and the head count
// are symbols; their values are shown next to the controls), so the set is finite:
// allTex() lists every part, and scripts/vendor.mjs renders them with KaTeX at build
// time. The page ships the rendered HTML, not KaTeX. No DOM.

const B = (v) => `\\mathbf{${v}}`;

/** The options a formula depends on. */
export const formulaKey = (s) => ({
  mode: s.mode, score: s.score, normalize: s.normalize, tempered: s.mode === 'attend' && s.normalize === 'softmax' && s.temperature !== 1,
  mask: s.mask, trainable: s.trainable, multihead: s.mode === 'self' && s.heads > 1, compare: s.compare,
});

function maskTex(f) {
  if (f.mask === 'causal') return 'e_{ij} = -\\infty \\text{ for } j > i';
  if (f.mask === 'padding') return 'e_{ij} = -\\infty \\text{ for } j > L';
  return null;
}

function scoreTex(score, f, prime = '') {
  const e = `e${prime}_{ij}`;
  const hd = f.mode === 'self' && f.multihead ? '^{(h)}' : '';
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
  const hd = f.mode === 'self' && f.multihead ? '^{(h)}' : '';
  const a = `\\alpha${prime}${hd}_{ij}`;
  const e = `e${prime}${hd}`;
  if (f.mode === 'attend' && f.normalize === 'sum') return `${a} = \\frac{${e}_{ij}}{\\sum_k ${e}_{ik}}`;
  const t = f.tempered ? '/\\tau' : '';
  return `${a} = \\frac{\\exp(${e}_{ij}${t})}{\\sum_k \\exp(${e}_{ik}${t})}`;
}

/** The TeX parts of a step's equation under formula options f (see formulaKey). */
export function texParts(step, f) {
  const self = f.mode === 'self';
  const attendF = { ...f, mode: 'attend', multihead: false };
  switch (step) {
    case 'q': case 'k': case 'v': {
      const M = step.toUpperCase();
      return [self && f.trainable ? `${M} = X W_${step}` : `${M} = X`];
    }
    case 'scores': return [scoreTex(f.score, f), ...(self ? [] : [`${B('q')}_i = ${B('k')}_i = ${B('x')}_i`]), maskTex(f)].filter(Boolean);
    case 'weights': return [weightTex(f)];
    case 'heads': return [`\\alpha^{(h)}_{ij},\\ h = 1 \\ldots H`];
    case 'context': return [self && f.multihead
      ? `${B('z')}_i = \\big[\\textstyle\\sum_j \\alpha^{(h)}_{ij} ${B('v')}^{(h)}_j\\big]_{h=1}^{H}`
      : `${B('z')}_i = \\sum_j \\alpha_{ij}\\, ${B('v')}_j`];
    case 'output': return [`O = Z\\,W_o`];
    case 'compare': return f.compare === 'none' ? [] : [scoreTex(f.compare, attendF, "'"), weightTex(attendF, "'")];
    case 'diff': return [`\\Delta_{ij} = \\alpha'_{ij} - \\alpha_{ij}`];
    default: return [];
  }
}

export const STEP_IDS = ['q', 'k', 'v', 'scores', 'weights', 'heads', 'context', 'output', 'compare', 'diff'];
const SCORES = ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location'];

/** Every TeX part the page can show (for the build-time render). */
export function allTex() {
  const out = new Set();
  for (const mode of ['attend', 'self']) {
    for (const score of SCORES) {
      for (const normalize of ['softmax', 'sum']) {
        for (const tempered of [false, true]) {
          for (const mask of ['none', 'causal', 'padding']) {
            for (const trainable of [false, true]) {
              for (const multihead of [false, true]) {
                for (const compare of ['none', ...SCORES]) {
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
