/* Looking inside a transformer (include/attnlab/transformer.h): its sizes and
 * tensors, head ablation, and what is read off it (attention, predictions,
 * the logit lens, generation, patching, attribution), each the one
 * decoder's pass (src/models/decoder_run.c) over the model's weights. Training
 * and everything that draws from its task: src/train/transformer_train.c. */
#include <string.h>

#include "base/error.h"
#include "models/decoder.h"
#include "models/transformer_internal.h"

const TfConfig *tfm_config(const TfModel *m) { return &m->c; }
int tfm_vocab(const TfModel *m) { return m->V; }
size_t tfm_num_params(const TfModel *m) { return m->opt.n; }
int tfm_steps(const TfModel *m) { return m->opt.steps; }
nn_real *tfm_params(TfModel *m) { return m->opt.params; }

const char *tfm_tensor(const TfModel *m, int i, size_t *offset, size_t *count) {
    if (i < 0 || i >= m->opt.n_tensors) return NULL;
    *offset = m->opt.tensors[i].offset;
    *count = m->opt.tensors[i].count;
    return m->opt.tensors[i].name;
}

int tfm_set_ablation(TfModel *m, const int32_t *pairs, int n) {
    return dec_set_ablation(m->ablate, m->c.heads, m->c.layers, m->c.heads, pairs, n);
}

/* ---- what is read off the model: the one decoder's passes (decoder_run.c) over its weights ---- */

int tfm_inspect(TfModel *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
                int32_t *lens) {
    return gpt2_inspect(&m->dec, tokens, n, attention, top_ids, top_p, lens, NULL);
}

int tfm_generate(TfModel *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int k, uint64_t seed) {
    return gpt2_generate(&m->dec, tokens, n_prompt, n_new, temperature, k, seed);
}

int tfm_logit_attribution(TfModel *m, const int32_t *tokens, int n, int a, int b, double *values, double *logit_diff) {
    return gpt2_logit_attribution(&m->dec, tokens, n, a, b, values, logit_diff);
}

int tfm_patch(TfModel *m, const int32_t *clean, const int32_t *corrupt, int n, int a, int b, int target, int method,
              float *out, double *metrics) {
    return gpt2_patch(&m->dec, clean, corrupt, n, a, b, target, method, out, metrics);
}
