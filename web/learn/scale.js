// Heatmaps that must share one colour scale (chapter 4's six score maps, chapter 7's α
// beside the frequencies of draws from it): the heatmap keeps the scale of the matrix it
// last drew when locked, so each is first given a two-cell matrix spanning 0 … top, then
// locked, then given its own weights. No DOM of its own.

/** Draws `matrix` on `hm` with the sequential scale 0 … `top` (kind 'weights'). */
export function updateOnScale(hm, matrix, opts, top) {
  hm.lockScale(false);
  hm.update({ rows: 1, cols: 2, data: new Float32Array([0, top]) }, { ...opts, kind: 'weights', rowLabels: [''], colLabels: ['', ''], describe: undefined });
  hm.lockScale(true);
  hm.update(matrix, { ...opts, kind: 'weights' });
}

/** The largest value of several matrices' data. */
export const largest = (...matrices) => Math.max(...matrices.map((m) => m.data.reduce((a, v) => (v > a ? v : a), -Infinity)));
