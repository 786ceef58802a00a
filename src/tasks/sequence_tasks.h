/* The transformer's generated tasks (TfTaskKind in attnlab/transformer.h):
 * each draws whole sequences of the same length n from a seeded stream,
 * with the position-by-position targets the loss scores (-1: unscored). */
#ifndef ATTNLAB_TASKS_SEQUENCE_TASKS_H
#define ATTNLAB_TASKS_SEQUENCE_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/transformer.h"

#define SEQ_MIN_CONTEXT TF_MIN_CONTEXT
#define SEQ_MIN_TEXT TF_MIN_TEXT /* characters of the 'text' task */

/* How a text is cut into tokens. */
typedef enum {
    SEQ_CHARS = 0, /* a token per character (UTF-8 code point) */
    SEQ_BYTES = 1, /* a token per byte: the 'text' models of format 1 files, saved before texts were read as characters */
} SeqUnit;

/* A text's distinct characters (code points, or bytes for SEQ_BYTES), in increasing order. */
typedef struct {
    uint32_t chars[TF_MAX_VOCAB];
    int count;     /* distinct characters */
    size_t length; /* characters in the text (line breaks included) */
} SeqAlphabet;

struct Task; /* the seq2seq task the 'dates' task draws from (attnlab/tasks.h) */

typedef struct SeqTask {
    TfTaskKind kind;
    SeqUnit unit;       /* how its text is cut into tokens */
    int vocab;          /* V: token ids 0..V-1 */
    int symbols;        /* ids 0..symbols-1 are content (what headScores' sequences draw) */
    int len;            /* n: every sequence's length, <= context */
    int max_in;         /* copy / reverse / sort: longest input */
    char names[TF_MAX_VOCAB][8]; /* each token's text: a character's UTF-8 (at most 4 bytes), "17", "\\xef" */
    uint8_t *text;      /* 'text': the user's characters as token ids (owned), train part then test part;
                           'names': every name's ids, each followed by the end token */
    size_t text_len, split_at; /* in tokens */
    struct Task *dates;    /* 'dates': the seq2seq dates task (owned) */
    int16_t byte_id[256];  /* 'dates': a character's token id, -1 if none */
    uint32_t *name_at[2];  /* 'names': where each name of a split starts in text (owned, one block) */
    int n_names[2];        /* 'names': names in each split */
} SeqTask;

/* Checks the context (and the text, text_len bytes cut by unit) and fills t; NN_ERR_* with a message. */
int seq_task_init(SeqTask *t, TfTaskKind kind, int context, const char *text, size_t text_len, SeqUnit unit);
void seq_task_free(SeqTask *t);
/* The vocabulary size seq_task_init would give, without building the task
 * (a text's distinct characters are counted, nothing the size of the text is
 * allocated): NN_OK, or the status seq_task_init would return for a text
 * it refuses outright. */
int seq_task_vocab(TfTaskKind kind, int context, const char *text, size_t text_len, SeqUnit unit, int *vocab);

/* The distinct characters of text into a: NN_ERR_VALUE for bytes that are
 * not UTF-8 (naming their offset) or a character no token can be, NN_ERR_LIMIT
 * past `room` of them. A name list (names = 1) leaves out its line breaks and
 * refuses control characters. */
int seq_alphabet(SeqAlphabet *a, const char *text, size_t text_len, SeqUnit unit, int names, int room);
/* The character at text[*at] (advancing *at past it); a valid text's only (seq_alphabet checked it). */
uint32_t seq_next_char(const char *text, size_t text_len, size_t *at, SeqUnit unit);
/* A character's index in a, or -1. */
int seq_alphabet_index(const SeqAlphabet *a, uint32_t c);
/* The token name of a character of unit into name. */
void seq_char_name(uint32_t c, SeqUnit unit, char name[8]);

/* The tasks on data (src/tasks/sequence_data.c), called by the two above. */
int seq_dates_init(SeqTask *t, int context);
void seq_dates_sample(const SeqTask *t, TfSplit split, uint64_t *rng, int32_t *tokens, int32_t *targets);
int seq_names_init(SeqTask *t, int context, const char *text, size_t text_len);
void seq_names_sample(const SeqTask *t, TfSplit split, uint64_t *rng, int32_t *tokens, int32_t *targets);
void seq_data_free(SeqTask *t);

/* One sequence: tokens (n) and targets (n) from the stream *rng. */
void seq_task_sample(const SeqTask *t, TfSplit split, uint64_t *rng, int32_t *tokens, int32_t *targets);

/* A sequence of n = t->len tokens that repeats a run of random symbols, for
 * head scores: source[i] is where an induction head at i should look (the
 * position after the earlier occurrence of tokens[i]), or -1. */
void seq_task_repeat(const SeqTask *t, uint64_t *rng, int32_t *tokens, int32_t *source);

#endif
