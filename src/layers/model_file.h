/* The model file: what every saved model (seq2seq, seq2seq with its task,
 * image model, transformer) has in common, read and written in one place.
 *
 *   magic (8 bytes, names the kind) | u32 format version | configuration
 *   (i32 fields, each format's own) | counters | parameter blocks (f32)
 *   | u32 FNV-1a of every byte before it
 *
 * All little-endian. A reader checks every field and the file's exact length
 * before anything is allocated from them, every weight (finite, within
 * MODEL_FILE_MAX_WEIGHT) and the checksum; the formats keep their own
 * layouts, so the files saved before this module load unchanged. Not a
 * public header. */
#ifndef ATTNLAB_LAYERS_MODEL_FILE_H
#define ATTNLAB_LAYERS_MODEL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/nn.h"
#include "layers/optim.h"

/* Which model a file holds (its magic): a bare seq2seq model, a seq2seq model
 * with its task (what loadSeq2Seq reads), an image model with its task, a
 * transformer with its task. */
typedef enum {
    MODEL_FILE_SEQ2SEQ = 1, /* "ATNLS2S\0" */
    MODEL_FILE_TRAINER = 2, /* "ATNLTRN\0" */
    MODEL_FILE_VISION = 3,  /* "ATNLVIS\0" */
    MODEL_FILE_TRANSFORMER = 4, /* "ATNLTFM\0" */
    MODEL_FILE_KIND_COUNT = 5
} ModelFileKind;

#define MODEL_FILE_MAGIC 8 /* bytes of the magic */
/* The largest weight a model may hold, saved or trained: past it, products of
 * a few weights overflow float32, so the model's own forward pass is no longer
 * finite (trained models stay within a few units; a step that goes past it
 * has diverged). */
#define MODEL_FILE_MAX_WEIGHT 1e6

/* A file being read: its bytes and the next one to read. Reads past the end
 * are the caller's bug: each format checks the length it needs first
 * (model_file_need) and the exact length before reading parameters. */
typedef struct {
    const uint8_t *bytes; /* the whole file */
    size_t size;          /* its length */
    size_t at;            /* the next byte to read */
} ModelFileReader;

/* The kind of the file's magic and its version, NN_ERR_VALUE for a file that
 * is none ("not an attnlab model file", naming a digit set as such) or of a
 * version this engine does not read. Reads only the header. */
int model_file_kind(const uint8_t *bytes, size_t size, int *kind, uint32_t *version);

/* Opens a file of one kind: the magic must be kind's (else "not an attnlab
 * <name>"), the version one of versions[0..n_versions) (returned in *version). */
int model_file_open(ModelFileReader *r, ModelFileKind kind, const uint8_t *bytes, size_t size,
                    const uint32_t *versions, int n_versions, uint32_t *version);
/* NN_OK if n more bytes are there, else NN_ERR_VALUE "truncated". */
int model_file_need(const ModelFileReader *r, size_t n);
/* NN_OK if the file is exactly `want` bytes, else NN_ERR_VALUE naming both. */
int model_file_length(const ModelFileReader *r, size_t want);
/* NN_OK if bytes [from, end - 4) hash to the u32 at end - 4 (FNV-1a), where
 * end = bytes + size; else NN_ERR_VALUE "checksum mismatch". */
int model_file_checksum(const uint8_t *from, const uint8_t *end);

uint32_t model_file_u32(ModelFileReader *r);
uint64_t model_file_u64(ModelFileReader *r);
double model_file_f64(ModelFileReader *r);
void model_file_i32s(ModelFileReader *r, int32_t *v, int n);
/* NN_OK if a file's step count is one a model can count (0..NN_MAX_OPT_STEPS),
 * and if the parameter count it states is the `want` its configuration
 * has; else NN_ERR_VALUE saying the file is damaged. */
int model_file_check_steps(long long steps);
int model_file_check_count(uint64_t count, size_t want);
/* Checks the n float32 weights at the cursor (finite, within
 * MODEL_FILE_MAX_WEIGHT) without moving it; NN_ERR_VALUE names the first bad one. */
int model_file_check_params(const ModelFileReader *r, size_t n);
/* Reads n float32 weights into x. */
void model_file_params(ModelFileReader *r, nn_real *x, size_t n);

/* Writing: each call writes at *p and advances it. */
void model_file_put_magic(uint8_t **p, ModelFileKind kind, uint32_t version);
void model_file_put_i32s(uint8_t **p, const int32_t *v, int n);
void model_file_put_f64(uint8_t **p, double x);
void model_file_put_params(uint8_t **p, const nn_real *x, size_t n);
/* The FNV-1a of [from, *p), as the file's last u32. */
void model_file_put_checksum(uint8_t **p, const uint8_t *from);
/* How every model file ends: its parameter block (u64 count, the float32
 * weights in table order) and the checksum of the file's bytes from `from`. */
void model_file_put_weights(uint8_t **p, const OptParams *opt, const uint8_t *from);

/* NN_OK if all n weights are finite and within MODEL_FILE_MAX_WEIGHT, else
 * NN_ERR_VALUE naming the first that is not (`what`: "weight", ...). Training
 * calls it after every step; the loaders on every parameter block. */
int model_file_check_weights(const nn_real *w, size_t n, const char *what);

#endif
