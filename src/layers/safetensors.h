/* The safetensors format (Hugging Face's model files): an 8-byte
 * little-endian header length N, N bytes of JSON naming each tensor
 * ({"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
 * "__metadata__": {...}}), then the data, offsets counted from its start.
 * This module reads the header into a table and checks what holds for any
 * file (well-formed, bounded JSON; sizes that match dtype x shape; offsets
 * inside the data, none overlapping; no name twice); what a model needs
 * of its tensors is the model's to check. Not a public header. */
#ifndef ATTNLAB_LAYERS_SAFETENSORS_H
#define ATTNLAB_LAYERS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_HEADER (16 << 20) /* header bytes */
#define ST_MAX_NAME 96           /* bytes of a tensor's name, NUL included */
#define ST_MAX_DIMS 8
#define ST_MAX_DEPTH 16 /* nesting of the JSON (metadata included) */

typedef enum { ST_F32 = 0, ST_F16 = 1, ST_BF16 = 2, ST_OTHER = 3 } StDtype;

typedef struct {
    char name[ST_MAX_NAME];
    char dtype_name[16]; /* as the file spells it ("F32", "BOOL"...) */
    StDtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    uint64_t begin, end; /* bytes [begin, end) of the data */
} StTensor;

typedef struct {
    StTensor *tensors;
    int count;
    uint64_t data_size; /* bytes after the header */
} StTable;

/* Bytes of one element of dtype (0 for ST_OTHER: its sizes go unchecked). */
int st_dtype_size(StDtype dtype);

/* Parses the header JSON (length bytes) of a file of file_size bytes into
 * *table (its tensors malloc'd: st_free frees them). Every check above; a
 * failure names the tensor. */
int st_parse(StTable *table, const uint8_t *json, size_t length, uint64_t file_size);
void st_free(StTable *table);

/* Element i of a tensor's bytes (little-endian F32, F16 or BF16) as a float. */
float st_decode(StDtype dtype, const uint8_t *bytes);

#endif
