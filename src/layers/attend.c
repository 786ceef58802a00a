/* An attention score's tensors (src/layers/attend.h). */
#include "layers/attend.h"

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
