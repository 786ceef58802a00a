// Each step's equation as TeX (from the state), rendered by KaTeX into a
// node only when the TeX changes.
import katex from '../vendor/katex/katex.js';

const B = (v) => `\\mathbf{${v}}`;
const maskTex = (s) => {
  if (s.mask === 'causal') return ',\\quad e_{ij} = -\\infty \\text{ for } j > i';
  if (s.mask === 'padding') return `,\\quad e_{ij} = -\\infty \\text{ for } j \\ge ${s.padLength}`;
  return '';
};

function scoreTex(score, s, prime = '') {
  const e = `e${prime}_{ij}`;
  const hd = s.mode === 'self' ? '^{(h)}' : '';
  const q = `${B('q')}${hd}_i`;
  const k = `${B('k')}${hd}_j`;
  switch (score) {
    case 'dot': return `${e} = {${q}}^{\\top} ${k}`;
    case 'scaled_dot': return `${e} = \\frac{{${q}}^{\\top} ${k}}{\\sqrt{${s.mode === 'self' ? 'd_h' : 'd'}}}`;
    case 'general': return `${e} = {${q}}^{\\top} W ${k}`;
    case 'additive': return `${e} = ${B('v')}^{\\top} \\tanh\\left(W_q ${q} + W_k ${k}\\right)`;
    case 'cosine': return `${e} = ${s.mode === 'self' ? '' : '\\beta\\,'}\\frac{${q} \\cdot ${k}}{\\lVert ${q} \\rVert\\,\\lVert ${k} \\rVert}`;
    case 'location': return `${e} = \\left(W ${q}\\right)_j`;
    default: return e;
  }
}

function weightTex(s, prime = '') {
  const a = `\\alpha${prime}_{ij}`;
  const e = `e${prime}`;
  if (s.mode === 'attend' && s.normalize === 'sum') return `${a} = \\frac{${e}_{ij}}{\\sum_k ${e}_{ik}}`;
  const t = s.mode === 'attend' && s.temperature !== 1 ? `/\\tau` : '';
  const tau = t ? `,\\quad \\tau = ${s.temperature}` : '';
  return `${a} = \\frac{\\exp(${e}_{ij}${t})}{\\sum_k \\exp(${e}_{ik}${t})}${tau}`;
}

/** The TeX for a step under the state. */
export function texFor(step, s) {
  const self = s.mode === 'self';
  switch (step) {
    case 'q': case 'k': case 'v': {
      const M = step.toUpperCase();
      return self && s.trainable ? `${M} = X W_${step}` : `${M} = X`;
    }
    case 'scores': return `${scoreTex(s.score, s)}${self ? '' : `,\\quad ${B('q')}_i = ${B('k')}_i = ${B('x')}_i`}${maskTex(s)}`;
    case 'weights': return weightTex(s);
    case 'context': return self && s.heads > 1
      ? `${B('z')}_i = \\big[\\textstyle\\sum_j \\alpha^{(h)}_{ij} ${B('v')}^{(h)}_j\\big]_{h=1}^{${s.heads}}`
      : `${B('z')}_i = \\sum_j \\alpha_{ij}\\, ${B('v')}_j`;
    case 'compare': return `${scoreTex(s.compare, { ...s, mode: 'attend' }, "'")},\\quad ${weightTex({ ...s, mode: 'attend' }, "'")}`;
    case 'diff': return `\\Delta_{ij} = \\alpha'_{ij} - \\alpha_{ij}`;
    default: return '';
  }
}

/** Renders TeX into el unless it already shows it. */
export function renderTex(el, tex) {
  if (el.dataset.tex === tex) return;
  katex.render(tex, el, { throwOnError: false, displayMode: true });
  el.dataset.tex = tex;
}
