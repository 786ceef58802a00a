/* Encoder-decoder with attention: the parameter table and its
 * initialisation, the activation block, create / destroy and batch growth.
 * The layers live in seq2seq_layers.c, training in seq2seq_train.c, decoding
 * in seq2seq_decode.c and the file format in seq2seq_io.c; all share the
 * model through seq2seq_internal.h (which also defines the dimension letters). */
#include <stdlib.h>
#include <string.h>

#include "base/layout.h"
#include "base/lifecycle.h"
#include "layers/shards.h"
#include "models/seq2seq_internal.h"

/* ---- the parameter table ------------------------------------------------- */

/* Builds the table of tensors (offsets into the one parameter block). */
static void build_table(Seq2Seq *m) {
    const S2sConfig *c = &m->c;
    OptParams *p = &m->opt;
    int D = m->D, E = c->embed, H = c->hidden;
    p->n_tensors = 0;
    p->n = 0;
    opt_add(p, &m->w.emb_in, (size_t)c->in_vocab * E, 0, OPT_INIT_EMBED);
    for (int l = 0; l < c->layers; l++)
        for (int d = 0; d < m->dirs; d++) cell_add(p, &m->w.enc[l][d], c->cell, l == 0 ? E : D, H);
    opt_add(p, &m->w.emb_out, (size_t)c->out_vocab * E, 0, OPT_INIT_EMBED);
    cell_add(p, &m->w.dec, c->cell, E, D);
    attend_add(p, &m->w.attn, c->attention, D, c->fixed_in, m->A);
    output_add(p, &m->w.out, m->W, D, c->out_vocab);
}

/* ---- activations: one block, carved by a table ---------------------------- */

/* Reserves count reals of the activation block; NULL for 0 or before the block exists. */
static nn_real *act(Seq2Seq *m, NnLayout *l, size_t count) {
    size_t at = nn_layout_take(l, count);
    return m->acts && count ? m->acts + at : NULL;
}

/* Carves the activation block (sizes m->n_acts when m->acts is still NULL). */
static void build_acts(Seq2Seq *m) {
    const S2sConfig *c = &m->c;
    size_t B = (size_t)m->Bm, T = (size_t)c->max_in, U = (size_t)c->max_out, E = (size_t)c->embed,
           H = (size_t)c->hidden, D = (size_t)m->D, V = (size_t)c->out_vocab, W = (size_t)m->W;
    size_t Se = (size_t)rnn_step_cache(c->cell, c->hidden), Sd = (size_t)rnn_step_cache(c->cell, m->D);
    size_t attn = c->attention >= 0, lstm = c->cell == RNN_CELL_LSTM;
    /* beam search runs as many rows as its width: a model of fewer rows than
     * S2S_MAX_BEAM grows before a wider search (s2s_beam); a shard does not decode */
    size_t K = m->is_replica ? 0 : B < S2S_MAX_BEAM ? B : S2S_MAX_BEAM, dec = !m->is_replica;
    AttnConfig ac = m->attn_cfg;
    ac.n_q = (int)U;
    ac.n_k = (int)T;
    size_t scratch = rnn_step_scratch(c->cell, (int)B, m->D);
    size_t as = attn ? attn_scratch_size(&ac) : 0;
    if (as > scratch) scratch = as;
    NnLayout l = {0};
    S2sActs *a = &m->a;
    a->enc_x = act(m, &l, B * T * E);
    a->d_enc_x = act(m, &l, B * T * E);
    for (int i = 0; i < c->layers; i++) {
        a->enc_out[i] = act(m, &l, B * T * D);
        a->d_enc_out[i] = act(m, &l, B * T * D);
        for (int d = 0; d < m->dirs; d++) {
            a->enc_h[i][d] = act(m, &l, T * B * H);
            a->enc_c[i][d] = act(m, &l, lstm * T * B * H);
            a->enc_cache[i][d] = act(m, &l, T * B * Se);
        }
    }
    for (int i = 0; i < 2; i++) {
        a->enc_dh[i] = act(m, &l, B * H);
        a->enc_dc[i] = act(m, &l, lstm * B * H);
    }
    a->zeros = act(m, &l, B * D);
    a->h0 = act(m, &l, B * D);
    a->c0 = act(m, &l, B * D);
    a->d_h0 = act(m, &l, B * D);
    a->d_c0 = act(m, &l, lstm * B * D);
    a->dec_x = act(m, &l, B * U * E);
    a->d_dec_x = act(m, &l, B * U * E);
    a->dec_h = act(m, &l, U * B * D);
    a->dec_c = act(m, &l, lstm * U * B * D);
    a->dec_cache = act(m, &l, U * B * Sd);
    for (int i = 0; i < 2; i++) {
        a->dec_dh[i] = act(m, &l, B * D);
        a->dec_dc[i] = act(m, &l, lstm * B * D);
    }
    a->query = act(m, &l, B * U * D);
    a->d_query = act(m, &l, B * U * D);
    a->scores = act(m, &l, attn * B * U * T);
    a->weights = act(m, &l, attn * B * U * T);
    a->ctx = act(m, &l, attn * B * U * D);
    a->d_ctx = act(m, &l, attn * B * U * D);
    a->cat = act(m, &l, B * U * W);
    a->d_cat = act(m, &l, B * U * W);
    a->o = act(m, &l, B * U * D);
    a->d_o = act(m, &l, B * U * D);
    a->probs = act(m, &l, B * U * V);
    a->d_logits = act(m, &l, B * U * V);
    a->logp = act(m, &l, dec * B * V);
    for (int i = 0; i < 2; i++) {
        a->beam_h[i] = act(m, &l, K * D);
        a->beam_c[i] = act(m, &l, K * D);
        a->beam_align[i] = act(m, &l, K * U * T);
    }
    a->best_align = act(m, &l, dec * U * T);
    a->beam_logp = act(m, &l, K);
    a->scratch = act(m, &l, scratch);
    m->n_acts = l.size;
}

/* ---- create / destroy ------------------------------------------------------ */

static int check_config(const S2sConfig *c) {
    if ((unsigned)c->cell >= RNN_CELL_COUNT) return nn_fail(NN_ERR_ARG, "cell: unknown cell %d (rnn, gru or lstm)", (int)c->cell);
    if (c->layers < 1 || c->layers > 2) return nn_fail(NN_ERR_VALUE, "layers: %d; the encoder has 1 or 2 layers", c->layers);
    if (c->bidirectional != 0 && c->bidirectional != 1)
        return nn_fail(NN_ERR_VALUE, "bidirectional: %d; it is 0 or 1", c->bidirectional);
    NN_TRY(nn_check_size("hidden", c->hidden, 1, S2S_MAX_HIDDEN));
    NN_TRY(nn_check_size("embed", c->embed, 1, S2S_MAX_EMBED));
    if (c->attention < S2S_ATTN_NONE || c->attention >= ATTN_SCORE_COUNT)
        return nn_fail(NN_ERR_ARG, "attention: unknown scoring function %d", c->attention);
    NN_TRY(nn_check_size("attnHidden", c->attn_hidden, 0, S2S_MAX_HIDDEN));
    if (c->in_vocab < S2S_FIRST_IN + 1 || c->in_vocab > S2S_MAX_VOCAB || c->out_vocab < S2S_FIRST_OUT + 1 || c->out_vocab > S2S_MAX_VOCAB)
        return nn_fail(NN_ERR_LIMIT, "vocabulary: %d input and %d output symbols; each must be within %d..%d and %d..%d",
                       c->in_vocab, c->out_vocab, S2S_FIRST_IN + 1, S2S_MAX_VOCAB, S2S_FIRST_OUT + 1, S2S_MAX_VOCAB);
    if (c->max_in < 1 || c->max_in > S2S_MAX_LEN || c->max_out < 1 || c->max_out > S2S_MAX_LEN)
        return nn_fail(NN_ERR_LIMIT, "lengths: inputs up to %d and outputs up to %d tokens; each must be within 1..%d",
                       c->max_in, c->max_out, S2S_MAX_LEN);
    NN_TRY(nn_check_size("batch", c->batch, 1, S2S_MAX_BATCH));
    if (c->fixed_in < 0 || c->fixed_in > c->max_in)
        return nn_fail(NN_ERR_VALUE, "fixed input length: %d; it must be within 0..%d", c->fixed_in, c->max_in);
    if (c->attention == ATTN_SCORE_LOCATION && (c->fixed_in < 1 || c->fixed_in != c->max_in))
        return nn_fail(NN_ERR_VALUE,
                       "attention: 'location' scores each input position with its own weights, so it needs inputs of one "
                       "fixed length; this task's inputs vary in length (use another score)");
    return NN_OK;
}

/* The sizes derived from the configuration, and the parameter table. */
static void plan(Seq2Seq *m, const S2sConfig *c) {
    m->c = *c;
    m->dirs = c->bidirectional ? 2 : 1;
    m->D = c->hidden * m->dirs;
    m->A = c->attn_hidden > 0 ? c->attn_hidden : m->D;
    m->W = c->attention >= 0 ? 2 * m->D : m->D;
    m->Bm = c->batch > S2S_MAX_BEAM ? c->batch : S2S_MAX_BEAM;
    m->replicas.n = 1;
    m->attn_cfg = (AttnConfig){0};
    m->attn_cfg.d_q = m->attn_cfg.d_k = m->attn_cfg.d_v = m->D;
    m->attn_cfg.hidden = c->attention == ATTN_SCORE_ADDITIVE ? m->A : 0;
    m->attn_cfg.score = c->attention >= 0 ? (AttnScore)c->attention : ATTN_SCORE_DOT;
    m->attn_cfg.norm = ATTN_NORM_SOFTMAX;
    m->attn_cfg.temperature = 1;
    build_table(m);
}

/* A model of configuration c with its sizes and table, owning nothing yet; NULL when out of memory. */
static Seq2Seq *model_new(const S2sConfig *c) {
    Seq2Seq *m = calloc(1, sizeof *m);
    if (m) plan(m, c);
    return m;
}

int s2s_plan(const S2sConfig *c, size_t *n_params) {
    NN_TRY(check_config(c));
    Seq2Seq m = {0}; /* its table only */
    plan(&m, c);
    *n_params = m.opt.n;
    return NN_OK;
}

/* ---- shard replicas ------------------------------------------------------- */

/* One shard's buffers for up to `rows` rows (layers/shards.h): planned from
 * the model's configuration, the model's weight view, its own activations,
 * encoder and decoder tokens, masks and gradients; no decoding buffers. The
 * model's weights must be bound (m->w) before. A replica owns what the model
 * owns (its gradient block instead of the optimiser's; no decoding buffers,
 * no replicas), so s2s_destroy frees either. */
static void *replica_make(const void *model, int rows) {
    const Seq2Seq *m = model;
    const S2sConfig *c = &m->c;
    Seq2Seq *r = model_new(c);
    if (!r) return NULL;
    r->w = m->w;
    r->is_replica = 1;
    r->Bm = rows;
    build_acts(r); /* sizes n_acts */
    r->acts = calloc(r->n_acts, sizeof(nn_real));
    r->ids = calloc((size_t)rows * (c->max_in + c->max_out), sizeof(int32_t)); /* enc_tok, dec_tok */
    r->key_lengths = calloc((size_t)c->max_out, sizeof(int32_t));
    r->mask = calloc((size_t)rows, 1);
    r->grads = opt_alloc_grads(&m->opt, &m->w, &r->g);
    if (!r->acts || !r->ids || !r->key_lengths || !r->mask || !r->grads) {
        s2s_destroy(r);
        return NULL;
    }
    build_acts(r); /* carves acts */
    r->batch.enc_tok = r->ids;
    r->batch.dec_tok = r->ids + (size_t)rows * c->max_in;
    return r;
}

static void replica_free(void *replica) { s2s_destroy(replica); }
static nn_real *replica_grads(void *replica) { return ((Seq2Seq *)replica)->grads; }
static const ReplicaAdapter REPLICAS = {replica_make, replica_free, replica_grads};

/* Frees the buffers that scale with the batch (alloc_rows) and the replicas. */
static void rows_free(Seq2Seq *m) {
    free(m->acts);
    free(m->ids);
    free(m->mask);
    free(m->dec_ids);
    shards_free(&m->replicas);
}

/* The buffers that scale with the batch: activations, the kept batch, masks
 * and decoding rows, all for m->Bm rows, and one replica per further shard
 * (as many shards as the pool has threads). On failure the old ones stay. */
static int alloc_rows(Seq2Seq *m) {
    int n_shards = m->want_shards ? m->want_shards : nn_pool_threads();
    ShardReplicas made;
    if (shards_make(&made, &REPLICAS, m, n_shards, m->Bm) != NN_OK)
        return nn_fail(NN_ERR_NOMEM, "seq2seq: out of memory for the buffers of %d threads (batches of %d)", n_shards, m->Bm);
    const S2sConfig *c = &m->c;
    size_t Bm = (size_t)m->Bm;
    Seq2Seq sized = *m; /* sizes the block for Bm rows; m's views stay on its old block until this succeeds */
    sized.acts = NULL;
    build_acts(&sized);
    nn_real *acts = calloc(sized.n_acts, sizeof(nn_real));
    /* the batch: in_ids, in_len, out_ids, out_len, enc_tok, dec_tok */
    int32_t *ids = calloc(Bm * (2 * (size_t)c->max_in + 2 * (size_t)c->max_out + 2), sizeof(int32_t));
    uint8_t *mask = calloc(Bm, 1);
    int32_t *dec_ids = calloc(2 * Bm, sizeof(int32_t));
    if (!acts || !ids || !mask || !dec_ids) {
        free(acts);
        free(ids);
        free(mask);
        free(dec_ids);
        shards_free(&made);
        return nn_fail(NN_ERR_NOMEM, "seq2seq: out of memory for %zu activations (batches of %d)", sized.n_acts, m->Bm);
    }
    rows_free(m);
    shards_install(&m->replicas, &made, &m->opt);
    m->acts = acts;
    build_acts(m); /* carves acts */
    m->ids = ids;
    m->batch.in_ids = ids;
    m->batch.in_len = m->batch.in_ids + Bm * c->max_in;
    m->batch.out_ids = m->batch.in_len + Bm;
    m->batch.out_len = m->batch.out_ids + Bm * c->max_out;
    m->batch.enc_tok = m->batch.out_len + Bm;
    m->batch.dec_tok = m->batch.enc_tok + Bm * c->max_in;
    m->mask = mask;
    m->dec_ids = dec_ids;
    m->row_len = dec_ids + Bm;
    m->have_forward = 0;
    return NN_OK;
}


int s2s_create(Seq2Seq **out, const S2sConfig *c) {
    return s2s_create_rows(out, c, c->batch > S2S_MAX_BEAM ? c->batch : S2S_MAX_BEAM);
}

int s2s_create_rows(Seq2Seq **out, const S2sConfig *c, int rows) {
    *out = NULL;
    nn_clear_error();
    NN_TRY(check_config(c));
    if (rows < 1 || rows > S2S_MAX_BATCH) return nn_fail(NN_ERR_LIMIT, "rows: %d; it must be within 1..%d", rows, S2S_MAX_BATCH);
    Seq2Seq *m = model_new(c);
    if (!m) return nn_fail(NN_ERR_NOMEM, "seq2seq: out of memory");
    m->Bm = rows;
    /* the weights first: the shard replicas (alloc_rows) share this weight view */
    int st = opt_create(&m->opt, &m->w, &m->g, c->seed);
    m->key_lengths = calloc((size_t)c->max_out, sizeof(int32_t));
    m->beam_tok = calloc((2 * S2S_MAX_BEAM + 1) * (size_t)c->max_out, sizeof(int32_t));
    if (st != NN_OK || !m->key_lengths || !m->beam_tok) {
        size_t n_params = m->opt.n;
        s2s_destroy(m);
        return nn_fail(NN_ERR_NOMEM, "seq2seq: out of memory for %zu parameters", n_params);
    }
    st = alloc_rows(m);
    return NN_CREATED(out, m, st, s2s_destroy);
}

int s2s_reserve(Seq2Seq *m, int batch) {
    nn_clear_error();
    if (batch < 1 || batch > S2S_MAX_BATCH)
        return nn_check_size("batch", batch, 1, S2S_MAX_BATCH);
    if (batch <= m->Bm) return NN_OK;
    int old = m->Bm;
    m->Bm = batch;
    int st = alloc_rows(m);
    if (st != NN_OK) m->Bm = old;
    return st;
}

int s2s_capacity(const Seq2Seq *m) { return m->Bm; }

int s2s_set_shards(Seq2Seq *m, int n) {
    NN_TRY(shards_check(n));
    int old = m->want_shards;
    m->want_shards = n;
    int st = alloc_rows(m);
    if (st != NN_OK) m->want_shards = old;
    return st;
}

int s2s_checkpoint(Seq2Seq *m) { return opt_snapshot(&m->opt); }

void s2s_rollback(Seq2Seq *m) {
    opt_rollback(&m->opt);
    m->have_forward = 0;
}

void s2s_destroy(Seq2Seq *m) {
    if (!m) return;
    rows_free(m);
    opt_free(&m->opt);
    NN_FREE_ALL(m->grads, m->key_lengths, m->beam_tok, m);
}

const S2sConfig *s2s_config(const Seq2Seq *m) { return &m->c; }
size_t s2s_num_params(const Seq2Seq *m) { return m->opt.n; }
nn_real *s2s_params(Seq2Seq *m) { return m->opt.params; }
nn_real *s2s_grads(Seq2Seq *m) { return m->opt.grads; }
int s2s_steps(const Seq2Seq *m) { return m->opt.steps; }
void s2s_zero_grad(Seq2Seq *m) { opt_zero_grad(&m->opt); }

/* ---- checks (also used by decoding) ----------------------------------- */

int s2s_check_batch(const Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                    const int32_t *out_len) {
    const S2sConfig *c = &m->c;
    if (B < 1 || B > m->Bm)
        return nn_fail(NN_ERR_LIMIT, "batch: %d rows; this model holds 1..%d now (s2s_reserve grows it up to %d)", B, m->Bm,
                       S2S_MAX_BATCH);
    for (int b = 0; b < B; b++) {
        if (in_len[b] < 1 || in_len[b] > c->max_in)
            return nn_fail(NN_ERR_SHAPE, "inputs: row %d has length %d; it must be within 1..%d", b, in_len[b], c->max_in);
        if (c->attention == ATTN_SCORE_LOCATION && in_len[b] != c->fixed_in)
            return nn_fail(NN_ERR_SHAPE, "inputs: row %d has length %d, but 'location' attention needs exactly %d", b,
                           in_len[b], c->fixed_in);
        for (int t = 0; t < in_len[b]; t++) {
            int id = in_ids[(size_t)b * c->max_in + t];
            if (id < S2S_FIRST_IN || id >= c->in_vocab)
                return nn_fail(NN_ERR_VALUE, "inputs: row %d, position %d has symbol id %d outside %d..%d", b, t, id,
                               S2S_FIRST_IN, c->in_vocab - 1);
        }
        if (out_ids) {
            if (out_len[b] < 1 || out_len[b] > c->max_out)
                return nn_fail(NN_ERR_SHAPE, "outputs: row %d has length %d; it must be within 1..%d", b, out_len[b], c->max_out);
            for (int t = 0; t < out_len[b]; t++) {
                int id = out_ids[(size_t)b * c->max_out + t];
                if (id < S2S_EOS || id >= c->out_vocab)
                    return nn_fail(NN_ERR_VALUE, "outputs: row %d, position %d has symbol id %d outside %d..%d", b, t, id,
                                   S2S_EOS, c->out_vocab - 1);
            }
        }
    }
    return NN_OK;
}
