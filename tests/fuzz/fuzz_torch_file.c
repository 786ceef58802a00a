/* libFuzzer target: pytorch_model.bin (torch_parse, then gpt2_open,
 * gpt2_load_chunk and gpt2_load_finish on the same bytes) on a file as given:
 * torch.save's zip, data.pkl a pickled state dict. The config is fuzz_gpt2's
 * (one layer of two heads, d_model 8, d_ff 16, context 8, vocabulary 16;
 * GPT-NeoX's where the file names gpt_neox): the seed corpus,
 * tests/fuzz/corpus/torch_file, is checkpoints of it written by
 * tests/lib/torch-file.mjs (F32, F16, BF16; an OrderedDict with _metadata or a
 * plain dict; one storage for all tensors; zip64's end record; the mask
 * buffers). A table that parses must lie inside the file; the whole file goes
 * in as the data in pieces whose size the input's last byte picks; a
 * checkpoint that opens must evaluate. Any status but NN_OK /
 * NN_ERR_* is a finding, and so is anything the sanitizers see. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/gpt2.h"
#include "fuzz.h"
#include "layers/torch_file.h"

/* fuzz_gpt2's config: its seeds are checkpoints of it (fuzz_gpt2 runs every pass on what opens) */
static Gpt2Config config_of(int neox) {
    Gpt2Config c = {.layers = 1, .heads = 2, .d_model = 8, .d_ff = 16, .context = 8, .vocab = 16, .epsilon = 1e-5};
    c.neox = neox;
    c.rotary_dims = 2;
    c.rotary_base = 10000;
    c.parallel = c.gelu_exact = 1;
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    StTable table;
    int st = torch_parse(&table, data, size, size);
    FUZZ_STATUS(st);
    if (st != NN_OK) {
        FUZZ_ASSERT(table.tensors == NULL && table.count == 0, "a refused file left a table");
    } else {
        for (int i = 0; i < table.count; i++) {
            const StTensor *t = &table.tensors[i];
            FUZZ_ASSERT(t->begin <= t->end && t->end <= size, "%s: bytes [%llu, %llu) outside the file", t->name,
                        (unsigned long long)t->begin, (unsigned long long)t->end);
            FUZZ_ASSERT(memchr(t->name, 0, sizeof t->name) != NULL, "a name without its NUL");
        }
        st_free(&table);
    }
    static const char neox[] = "gpt_neox";
    int is_neox = 0;
    for (size_t i = 0; i + sizeof neox - 1 <= size && !is_neox; i++) is_neox = !memcmp(data + i, neox, sizeof neox - 1);
    const Gpt2Config config = config_of(is_neox);
    Gpt2 *m = NULL;
    st = gpt2_open(&m, &config, data, size, (double)size);
    FUZZ_STATUS(st);
    if (st != NN_OK) {
        FUZZ_ASSERT(m == NULL, "a failed open returned a model");
        return 0;
    }
    size_t piece = 1 + (size > 0 ? data[size - 1] % 64 : 0);
    for (size_t at = 0; st == NN_OK && at < size; at += piece) {
        st = gpt2_load_chunk(m, data + at, size - at < piece ? size - at : piece);
        FUZZ_STATUS(st);
    }
    if (st == NN_OK) {
        st = gpt2_load_finish(m);
        FUZZ_STATUS(st);
    }
    if (st == NN_OK) {
        int32_t tokens[] = {1, 5, 9, 2, 1, 5, 9, 2};
        double loss = 0;
        FUZZ_STATUS(gpt2_evaluate(m, tokens, config.context, &loss));
    }
    gpt2_destroy(m);
    return 0;
}
