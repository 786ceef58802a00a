/* libFuzzer target: the task parser. The input's first byte picks a task
 * kind and length range (so the generated tasks are exercised too), the rest
 * is the text of a 'pairs' task ("input<TAB>output" lines). A task that is
 * created must sample examples of every split and encode and decode them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/tasks.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    TaskConfig c = {TASK_PAIRS, TASK_DIGITS, 1, 8};
    if (data[0] >= 0xf0) { /* a generated task with a fuzzed configuration */
        c.kind = (TaskKind)(data[0] % 6);
        c.alphabet = (TaskAlphabet)((data[0] >> 1) & 1);
        c.min_len = size > 1 ? (int8_t)data[1] : 1;
        c.max_len = size > 2 ? (int8_t)data[2] : 8;
    }
    const char *text = (const char *)data + 1;
    Task *t = NULL;
    int st = task_create(&t, &c, text, size - 1);
    FUZZ_STATUS(st);
    if (st != NN_OK) {
        FUZZ_ASSERT(t == NULL, "a failed task_create returned a task");
        return 0;
    }
    int max_in = task_max_in(t), max_out = task_max_out(t);
    FUZZ_ASSERT(max_in >= 1 && max_in <= TASK_MAX_LEN && max_out >= 1 && max_out <= TASK_MAX_LEN + 1,
                "lengths %d, %d out of range", max_in, max_out);
    char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1], decoded[TASK_MAX_LEN + 2];
    int32_t ids[TASK_MAX_LEN + 1], in_ids[4 * (TASK_MAX_LEN + 1)], in_len[4], out_ids[4 * (TASK_MAX_LEN + 1)],
        out_len[4];
    uint64_t rng = size;
    for (int split = 0; split < 3; split++) {
        if (task_split_size(t, (TaskSplit)split) == 0) continue;
        int s = task_sample(t, (TaskSplit)split, &rng, in, out);
        FUZZ_STATUS(s);
        if (s != NN_OK) continue;
        int n = task_encode_input(t, in, strlen(in), ids, max_in);
        FUZZ_ASSERT(n >= 1 && n <= max_in, "a sampled input encodes to %d ids (max %d): '%s'", n, max_in, in);
        for (int i = 0; i < n; i++)
            FUZZ_ASSERT(ids[i] >= 1 && ids[i] < task_in_vocab(t), "input id %d out of range", ids[i]);
        FUZZ_STATUS(task_sample_batch(t, (TaskSplit)split, &rng, 4, in_ids, in_len, out_ids, out_len));
    }
    /* the raw text as an input: encodes or says why */
    char probe[TASK_MAX_LEN + 1];
    size_t n = size - 1 < TASK_MAX_LEN ? size - 1 : TASK_MAX_LEN;
    memcpy(probe, text, n);
    probe[n] = 0;
    int e = task_encode_input(t, probe, n, ids, max_in);
    FUZZ_ASSERT(e <= max_in, "encoded %d ids into %d", e, max_in);
    int32_t out_tok[3] = {3, 3, TASK_EOS};
    task_decode_output(t, out_tok, task_out_vocab(t) > 3 ? 3 : 1, decoded, (int)sizeof decoded);
    task_destroy(t);
    return 0;
}
