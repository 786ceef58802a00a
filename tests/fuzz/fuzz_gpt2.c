/* libFuzzer target: GPT-2 and GPT-NeoX checkpoints (gpt2_open, gpt2_load_chunk,
 * gpt2_load_finish) on a safetensors file as given: an 8-byte little-endian
 * header length, the JSON header, the tensors' bytes. The config is fixed
 * (one layer of two heads, d_model 8, d_ff 16, context 8, vocabulary 16: the
 * seed corpus, tests/fuzz/corpus/gpt2, is checkpoints of it in F32, F16 and
 * BF16, prefixed or not, tied or not, with the attention buffers), GPT-NeoX's
 * (rotary over 2 of each head's 4 dimensions, a parallel residual, the exact
 * GELU) where the header names gpt_neox. The data
 * goes in in pieces whose size the input's last byte picks, so a chunk cuts
 * an element anywhere. A checkpoint that opens must inspect, evaluate and
 * score its heads; any status but NN_OK / NN_ERR_* is a finding, and so is
 * anything the sanitizers see. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/gpt2.h"
#include "fuzz.h"

enum { T = 8, V = 16, L = 1, H = 2 };

static void run_model(Gpt2 *m) {
    int32_t tokens[T] = {1, 5, 9, 2, 1, 5, 9, 2};
    static float attention[L * H * T * T], top_p[T * GPT2_TOP], logits[T * V];
    static int32_t top_ids[T * GPT2_TOP], lens[L * T];
    FUZZ_STATUS(gpt2_inspect(m, tokens, T, attention, top_ids, top_p, lens, logits));
    double loss = 0;
    int st = gpt2_evaluate(m, tokens, T, &loss);
    FUZZ_STATUS(st);
    FUZZ_ASSERT(st != NN_OK || loss == loss, "a loaded checkpoint's loss is NaN");
    float prev[L * H], ind[L * H];
    FUZZ_STATUS(gpt2_head_scores(m, 1, 3, 1, prev, ind));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 8) return 0;
    uint64_t header_len = 0;
    for (int i = 0; i < 8; i++) header_len |= (uint64_t)data[i] << (8 * i);
    if (header_len > size - 8) return 0; /* the JS loader refuses it before the core sees it */
    static const char neox[] = "gpt_neox";
    int is_neox = 0;
    for (size_t i = 0; i + sizeof neox - 1 <= header_len && !is_neox; i++)
        is_neox = !memcmp(data + 8 + i, neox, sizeof neox - 1);
    const Gpt2Config config = {.layers = L, .heads = H, .d_model = 8, .d_ff = 16, .context = T, .vocab = V, .epsilon = 1e-5,
                               .neox = is_neox, .rotary_dims = 2, .rotary_base = 10000, .parallel = 1, .gelu_exact = 1};
    Gpt2 *m = NULL;
    int st = gpt2_open(&m, &config, data + 8, (size_t)header_len, (double)size);
    FUZZ_STATUS(st);
    if (st != NN_OK) {
        FUZZ_ASSERT(m == NULL, "a failed open returned a model");
        return 0;
    }
    const uint8_t *rest = data + 8 + header_len;
    size_t left = size - 8 - (size_t)header_len;
    size_t piece = 1 + (size > 0 ? data[size - 1] % 64 : 0);
    while (st == NN_OK && left > 0) {
        size_t n = left < piece ? left : piece;
        st = gpt2_load_chunk(m, rest, n);
        FUZZ_STATUS(st);
        rest += n;
        left -= n;
    }
    if (st == NN_OK) {
        st = gpt2_load_finish(m);
        FUZZ_STATUS(st);
    }
    if (st == NN_OK) run_model(m);
    gpt2_destroy(m);
    return 0;
}
