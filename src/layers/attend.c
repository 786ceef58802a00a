/* An attention score's tensors and attention over a grid (src/layers/attend.h). */
#include "layers/attend.h"

#include "base/error.h"

void attend_add(OptParams *p, AttnWeights *w, int score, int d, int n_k, int A) {
    switch (score) {
    case ATTN_SCORE_GENERAL: opt_add(p, &w->W, (size_t)d * d, d, OPT_INIT_UNIFORM); break;
    case ATTN_SCORE_LOCATION: opt_add(p, &w->W, (size_t)n_k * d, d, OPT_INIT_UNIFORM); break;
    case ATTN_SCORE_ADDITIVE:
        opt_add(p, &w->Wq, (size_t)A * d, d, OPT_INIT_UNIFORM);
        opt_add(p, &w->Wk, (size_t)A * d, d, OPT_INIT_UNIFORM);
        opt_add(p, &w->v, (size_t)A, A, OPT_INIT_UNIFORM);
        break;
    case ATTN_SCORE_COSINE: opt_add(p, &w->beta, 1, 0, OPT_INIT_ONE); break;
    default: break; /* dot and scaled dot have no tensors */
    }
}

AttnParams attend_params(const AttnWeights *w) {
    return (AttnParams){w->W, w->Wq, w->Wk, w->v, w->beta ? w->beta[0] : 1};
}

AttnParamGrads attend_grads(const AttnWeights *g) { return (AttnParamGrads){g->W, g->Wq, g->Wk, g->v, 0}; }

void attend_grads_end(AttnWeights *g, const AttnParamGrads *pg) {
    if (g->beta) g->beta[0] += pg->beta;
}

/* Row b's attention problem: its keys, and the keys its queries see. */
static const nn_real *row_keys(const AttendGrid *x, const AttnConfig *cfg, int b) {
    return x->shared ? x->keys : x->keys + (size_t)b * cfg->n_k * cfg->d_k;
}

static AttnConfig row_config(const AttendGrid *x, const AttnConfig *cfg, int b) {
    AttnConfig ac = *cfg;
    ac.key_lengths = NULL;
    if (x->lengths && ac.n_q == 1) ac.key_lengths = x->lengths + b;
    else if (x->lengths) {
        for (int i = 0; i < ac.n_q; i++) x->visible[i] = x->lengths[b];
        ac.key_lengths = x->visible;
    }
    return ac;
}

int attend_forward(const AttendGrid *x, const AttnWeights *w, const AttnConfig *cfg, int B, nn_real *scratch) {
    AttnParams p = attend_params(w);
    size_t qd = (size_t)cfg->n_q * cfg->d_q, qk = (size_t)cfg->n_q * cfg->n_k;
    for (int b = 0; b < B; b++) {
        AttnConfig ac = row_config(x, cfg, b);
        const nn_real *keys = row_keys(x, cfg, b);
        NN_TRY(attn_forward(&ac, &p, x->scores + b * qk, x->weights + b * qk, x->context + b * qd, x->query + b * qd,
                            keys, keys, scratch));
    }
    return NN_OK;
}

int attend_backward(const AttendGridGrads *d, AttnWeights *g, const AttendGrid *x, const AttnWeights *w,
                    const AttnConfig *cfg, int B, nn_real *scratch) {
    AttnParams p = attend_params(w);
    AttnParamGrads pg = attend_grads(g);
    size_t qd = (size_t)cfg->n_q * cfg->d_q, qk = (size_t)cfg->n_q * cfg->n_k;
    for (int b = 0; b < B; b++) {
        AttnConfig ac = row_config(x, cfg, b);
        const nn_real *keys = row_keys(x, cfg, b);
        /* context = weights x keys: the keys are the values too, so both gradients land in d_keys */
        nn_real *dkeys = x->shared ? NULL : d->d_keys + (size_t)b * cfg->n_k * cfg->d_k;
        NN_TRY(attn_backward(&ac, &p, &pg, d->d_query + b * qd, dkeys, dkeys, d->d_context + b * qd,
                             d->d_weights ? d->d_weights + b * qk : NULL, x->scores + b * qk, x->weights + b * qk,
                             x->query + b * qd, keys, keys, scratch));
    }
    attend_grads_end(g, &pg);
    return NN_OK;
}
