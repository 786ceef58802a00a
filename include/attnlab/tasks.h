/* attnlab sequence-to-sequence tasks, generated in C from a seed.
 *
 *   copy     "83920"               -> "83920"
 *   reverse  "83920"               -> "02938"
 *   sort     "83920"               -> "02389"
 *   dates    "25th of June, 2009"  -> "2009-06-25"   (many formats, 1950-2049)
 *   pairs    the user's own lines "input<TAB>output"
 *
 * Token ids. Inputs: 0 = PAD, then 1 + index in the task's input alphabet.
 * Outputs: 0 = PAD, 1 = BOS (decoder start), 2 = EOS, then 3 + index in the
 * output alphabet. Every output sequence ends with EOS (counted in its length).
 *
 * Splits: every example belongs to exactly one of train / validation / test,
 * decided by a hash of its source (the input string; for dates the calendar
 * date, so a test date is never trained on in any format): 80% / 10% / 10%.
 * Sampling draws from one split only, so splits never overlap. */
#ifndef ATTNLAB_TASKS_H
#define ATTNLAB_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/nn.h"
#include "attnlab/seq2seq.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TASK_MAX_LEN 64      /* longest input or output string (characters) */
#define TASK_MAX_ALPHABET 96 /* symbols in an alphabet */
#define TASK_MAX_PAIRS 100000

typedef enum { TASK_COPY = 0, TASK_REVERSE = 1, TASK_SORT = 2, TASK_DATES = 3, TASK_PAIRS = 4, TASK_KIND_COUNT = 5 } TaskKind;
typedef enum { TASK_DIGITS = 0, TASK_LETTERS = 1 } TaskAlphabet; /* copy / reverse / sort */
typedef enum { TASK_TRAIN = 0, TASK_VALID = 1, TASK_TEST = 2 } TaskSplit;

/* Token ids: the model's vocabulary layout (include/attnlab/seq2seq.h): inputs
 * are PAD then the input alphabet from TASK_FIRST_IN; outputs are PAD, BOS,
 * EOS, then the output alphabet from TASK_FIRST_OUT. */
enum { TASK_PAD = S2S_PAD, TASK_BOS = S2S_BOS, TASK_EOS = S2S_EOS, TASK_FIRST_IN = S2S_FIRST_IN, TASK_FIRST_OUT = S2S_FIRST_OUT };

typedef struct {
    TaskKind kind;         /* which task */
    TaskAlphabet alphabet; /* copy / reverse / sort: digits 0-9 or letters a-z */
    int min_len;           /* copy / reverse / sort: shortest input, 1..TASK_MAX_LEN - 1 */
    int max_len;           /* copy / reverse / sort: longest input, min_len..TASK_MAX_LEN - 1 */
} TaskConfig;

typedef struct Task Task; /* opaque */

/* Creates a task. For TASK_PAIRS, text holds lines "input<TAB>output"
 * (len bytes, '\n' or "\r\n" separated, blank lines skipped); a bad line
 * (no tab, empty side, longer than TASK_MAX_LEN, a character outside
 * printable ASCII) fails with NN_ERR_VALUE naming the line number. */
int task_create(Task **out, const TaskConfig *c, const char *text, size_t len);
void task_destroy(Task *t);

int task_in_vocab(const Task *t);  /* number of input ids (PAD + alphabet) */
int task_out_vocab(const Task *t); /* number of output ids (PAD, BOS, EOS + alphabet) */
int task_max_in(const Task *t);    /* longest input, in tokens */
int task_max_out(const Task *t);   /* longest output, in tokens, EOS included */
/* Fixed input length (every input has it), or 0 when lengths vary. */
int task_fixed_in(const Task *t);
const char *task_in_alphabet(const Task *t);  /* the input symbols, in id order */
const char *task_out_alphabet(const Task *t); /* the output symbols, in id order */

/* Input text (len bytes of UTF-8; a NUL byte is a character like any other)
 * -> ids (no padding); returns the length, or a negative NnStatus (empty, a
 * character outside the input alphabet, too long) with the message naming
 * the character and its position (1-based, in characters). */
int task_encode_input(const Task *t, const char *text, size_t len, int32_t *ids, int max);
/* Output ids -> text up to EOS (PAD/BOS skipped); writes at most max-1 chars + NUL. */
void task_decode_output(const Task *t, const int32_t *ids, int n, char *text, int max);

/* One example of a split from a seeded stream: writes the input and the
 * expected output strings (NUL-terminated, each up to TASK_MAX_LEN + 1 bytes).
 * For pairs, draws uniformly from the split's lines. *rng is advanced. */
int task_sample(const Task *t, TaskSplit split, uint64_t *rng, char *input, char *output);

/* A batch of B examples of a split as padded ids:
 * in_ids (B, max_in), in_len (B), out_ids (B, max_out), out_len (B) (EOS included). */
int task_sample_batch(const Task *t, TaskSplit split, uint64_t *rng, int B, int32_t *in_ids,
                      int32_t *in_len, int32_t *out_ids, int32_t *out_len);

/* Number of lines in a split (pairs), or -1 for generated tasks (unbounded). */
int task_split_size(const Task *t, TaskSplit split);

#ifdef __cplusplus
}
#endif
#endif
