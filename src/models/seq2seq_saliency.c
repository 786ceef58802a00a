/* Implicit attention of a seq2seq model: how strongly the log-probability of
 * one output token responds to each input token, read from the gradient of
 * log p(y_step) with respect to the input embeddings (Simonyan et al.'s
 * saliency, applied to embeddings). Set beside the attention weights of the
 * same step, it shows where explicit and implicit attention agree. */
#include <math.h>
#include <string.h>

#include "models/seq2seq_internal.h"

int s2s_saliency(Seq2Seq *m, const int32_t *in_ids, int n, const int32_t *out_ids, int out_len, int step,
                 nn_real *saliency) {
    nn_clear_error();
    if (out_len < 1 || out_len > m->c.max_out)
        return nn_fail(NN_ERR_VALUE, "output length %d; it must be within 1..%d", out_len, m->c.max_out);
    if (step < 0 || step >= out_len)
        return nn_fail(NN_ERR_VALUE, "step: %d; this output has steps 0..%d", step, out_len - 1);
    int32_t in_len = n, len = out_len;
    nn_real loss;
    s2s_zero_grad(m);
    NN_TRY(s2s_forward(m, 1, in_ids, &in_len, out_ids, &len, &loss));
    /* d(-log p_y)/d logits = p - onehot(y) on the chosen step only (B = 1) */
    int U = m->U, V = m->c.out_vocab, E = m->c.embed;
    nn_real *d = m->a.d_logits;
    memset(d, 0, sizeof(nn_real) * (size_t)U * V);
    memcpy(d + (size_t)step * V, m->a.probs + (size_t)step * V, sizeof(nn_real) * V);
    d[(size_t)step * V + out_ids[step]] -= 1;
    int st = s2s_backward_logits(m);
    s2s_zero_grad(m); /* the parameter gradients were a by-product */
    NN_TRY(st);
    for (int j = 0; j < n; j++) {
        const nn_real *g = m->a.d_enc_x + (size_t)j * E;
        double s = 0;
        for (int e = 0; e < E; e++) s += (double)g[e] * g[e];
        saliency[j] = (nn_real)sqrt(s);
    }
    return NN_OK;
}
