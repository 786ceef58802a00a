// Cases for the documentation test's checker (tests/lib/doc-samples.mjs): what a
// sample printed (console.log's arguments), the comment beside it, and whether
// they agree.
export const checkerCases = [
  { args: ['0.4753 0.4937'], comment: '0.4753 0.4937', ok: true },
  { args: ['0.4753 0.4937'], comment: '0.4753 0.4938', ok: false },
  { args: ['0.4753 0.4937 0.3474'], comment: '0.4753 ...', ok: true },
  { args: ['ERR_VALUE', true], comment: 'ERR_VALUE true', ok: true },
  { args: ['ERR_VALUE', false], comment: 'ERR_VALUE true', ok: false },
  { args: [{ rows: 6, cols: 6, data: new Float32Array(36) }], comment: '{ rows: 6, cols: 6, data: Float32Array(36) }', ok: true },
  { args: [{ rows: 6, cols: 6, data: new Float32Array(35) }], comment: '{ rows: 6, cols: 6, data: Float32Array(36) }', ok: false },
  { args: [{ rows: 6, cols: 6, data: new Float64Array(36) }], comment: '{ rows: 6, cols: 6, data: Float32Array(36) }', ok: false },
  { args: [{ rows: 6, cols: 6 }], comment: '{ rows: 6, cols: 6, data }', ok: false },
  { args: [{ rows: 6, cols: 6, extra: 1 }], comment: '{ rows: 6, cols: 6 }', ok: false },
  { args: [{ rows: 6, cols: 6, extra: 1 }], comment: '{ rows: 6, ... }', ok: true },
  { args: [{ loss: 0.021, split: 'test' }], comment: "{ loss: 0.02, split: 'test' }", ok: true },
  { args: [{ loss: 0.031, split: 'test' }], comment: "{ loss: 0.02, split: 'test' }", ok: false },
  { args: [{ split: 'train' }], comment: "{ split: 'test' }", ok: false },
  { args: [['context']], comment: "['context']", ok: true },
  { args: [['context', 'weights']], comment: "['context']", ok: false },
  { args: [['context', 'weights']], comment: "['context', ...]", ok: true },
  { args: [{ steps: [{ location: null }] }], comment: '{ steps: [{ location: null }] }', ok: true },
  { args: [{ steps: [{ location: 3 }] }], comment: '{ steps: [{ location: null }] }', ok: false },
];
