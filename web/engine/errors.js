// Errors the engine throws: an Error with a message naming the argument and a
// stable string `.code`, the same for checks made in JS and in the C core.

/** C status codes (include/attnlab/nn.h NnStatus) to `.code` strings. */
export const STATUS_CODES = Object.freeze({
  1: 'ERR_SHAPE',
  2: 'ERR_VALUE',
  3: 'ERR_ARG',
  4: 'ERR_PARAM',
  5: 'ERR_LIMIT',
  6: 'ERR_ZERO_SUM',
  7: 'ERR_NOMEM',
});

export class AttnlabError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'AttnlabError';
    this.code = code;
  }
}

export const shapeError = (message) => new AttnlabError('ERR_SHAPE', message);
export const valueError = (message) => new AttnlabError('ERR_VALUE', message);
export const argError = (message) => new AttnlabError('ERR_ARG', message);
export const paramError = (message) => new AttnlabError('ERR_PARAM', message);
export const limitError = (message) => new AttnlabError('ERR_LIMIT', message);
