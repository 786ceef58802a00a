/* What the WASM exports share with web/engine/wasm.js: the records they fill
 * for JS and the description of each record's fields (JS name, byte offset,
 * type, count), which attnlab_constants() publishes so JS reads the records
 * by name instead of by position. */
#ifndef ATTNLAB_WASM_BOUNDARY_H
#define ATTNLAB_WASM_BOUNDARY_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/vision.h"

/* Largest 'pairs' text JS copies into the heap for one task (bytes). */
#define ATTNLAB_MAX_PAIRS_BYTES (8 << 20)

/* A seq2seq model's configuration and sizes, filled by attnlab_s2s_info(). */
typedef struct {
    int32_t task;              /* TaskKind */
    int32_t alphabet;          /* TaskAlphabet */
    int32_t min_length;        /* copy / reverse / sort input length range */
    int32_t max_length;
    int32_t input_vocabulary;  /* input ids, PAD included */
    int32_t output_vocabulary; /* output ids, PAD, BOS, EOS included */
    int32_t max_input;         /* longest input, tokens */
    int32_t max_output;        /* longest output, tokens, EOS included */
    int32_t fixed_input;       /* the one input length of a location-scored model, else 0 */
    int32_t cell;              /* RnnCellKind */
    int32_t layers;            /* encoder layers */
    int32_t bidirectional;     /* 1 when the encoder reads both ways */
    int32_t embed;             /* embedding size */
    int32_t hidden;            /* encoder hidden size per direction */
    int32_t attention;         /* AttnScore, or S2S_ATTN_NONE */
    int32_t attn_hidden;       /* additive score's hidden size (0: the encoder width) */
    int32_t batch;             /* largest batch the model's buffers hold now */
    double parameters;         /* parameter count */
    double steps;              /* optimiser steps taken */
    double seed;               /* initial weights and training draws */
} AttnlabS2sInfo;

/* An image model's configuration and sizes, filled by attnlab_vis_info(). */
typedef struct {
    int32_t task;                     /* ImgTaskKind */
    int32_t clutter;                  /* cluttered task: pieces of other digits */
    int32_t min_digits;               /* multi task: digits per image */
    int32_t max_digits;
    int32_t rows;                     /* canvas R x Q */
    int32_t cols;
    int32_t layers;                   /* conv layers */
    int32_t channels[VIS_MAX_LAYERS]; /* C_l, 0 past layers */
    int32_t cell;                     /* RnnCellKind */
    int32_t hidden;                   /* H */
    int32_t attention;                /* AttnScore, or VIS_ATTN_NONE */
    int32_t mode;                     /* VisMode */
    int32_t steps;                    /* decoder steps T */
    int32_t batch;                    /* largest batch */
    int32_t grid_rows;                /* the feature grid gr x gc */
    int32_t grid_cols;
    int32_t sequence;                 /* 1 when answers are sequences */
    int32_t start;                    /* VisStart */
    int32_t sensor;                   /* VisSensor */
    int32_t retina_size;              /* the retina's side per scale (0 with the grid) */
    int32_t retina_scales;            /* its scales (0 with the grid) */
    double parameters;                /* parameter count */
    double optimizer_steps;           /* optimiser steps taken */
    double seed;                      /* initial weights and hard mode's samples */
    double entropy;                   /* hard mode's entropy bonus */
    double sigma;                     /* the retina's location spread (0 with the grid) */
} AttnlabVisInfo;

typedef enum { ATTNLAB_I32, ATTNLAB_F64 } AttnlabFieldType;

/* One field of a record: its JS name, where it is, what it holds. */
typedef struct {
    const char *name;
    size_t offset;
    AttnlabFieldType type;
    int count; /* values (1 for a scalar) */
} AttnlabField;

#define ATTNLAB_FIELD(record, member, js_name, type) \
    {js_name, offsetof(record, member), type, (int)(sizeof(((record *)0)->member) / ((type) == ATTNLAB_F64 ? 8 : 4))}

/* A record JS reads: its name in the constants table, size and fields. */
typedef struct {
    const char *name;
    size_t size;
    const AttnlabField *fields;
    int n_fields;
} AttnlabRecord;

/* The records seq2seq_exports.c fills (AttnlabS2sInfo, TrainerEval) and
 * those vision_exports.c fills (AttnlabVisInfo, VisEval), each table with its count. */
extern const AttnlabRecord attnlab_s2s_records[];
extern const int attnlab_s2s_records_count;
extern const AttnlabRecord attnlab_vis_records[];
extern const int attnlab_vis_records_count;

/* One record: its JS name, C type and field table. */
#define ATTNLAB_RECORD(name, type, fields) {name, sizeof(type), fields, (int)(sizeof(fields) / sizeof((fields)[0]))}
/* Defines the table `table` of the records given and table_count. */
#define ATTNLAB_RECORDS(table, ...)              \
    const AttnlabRecord table[] = {__VA_ARGS__}; \
    const int table##_count = (int)(sizeof table / sizeof table[0])

#endif
