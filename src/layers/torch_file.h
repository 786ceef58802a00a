/* PyTorch's checkpoint file (pytorch_model.bin, torch.save's zip): entries
 * <archive>/data.pkl, <archive>/data/<key> (one a storage), <archive>/version
 * and others, stored uncompressed. data.pkl is a pickle (protocol 2) of a
 * dict (an OrderedDict, or a plain dict) of name -> torch._utils.
 * _rebuild_tensor_v2(persistent_load(('storage', torch.FloatStorage, key,
 * location, numel)), offset, size, stride, requires_grad, OrderedDict()).
 *
 * This module reads the file into the table the safetensors reader makes
 * (StTable, layers/safetensors.h), so a model reads either by name. It takes
 * the WHOLE FILE in memory: the zip's directory is at its end. The pickle is
 * interpreted, never evaluated: only the opcodes and globals a state dict
 * needs are known (torch_file.c lists them), and anything else is refused
 * with NN_ERR_VALUE naming the opcode and its byte in data.pkl. Every size is
 * checked in 64 bits; a tensor must be contiguous and row-major and its bytes
 * inside its storage's entry; an entry must be stored (not compressed) and
 * inside the file. Not a public header. */
#ifndef ATTNLAB_LAYERS_TORCH_FILE_H
#define ATTNLAB_LAYERS_TORCH_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "layers/safetensors.h"

#define TORCH_MAX_PICKLE (64 << 20) /* bytes of data.pkl */
#define TORCH_MAX_ENTRIES (1 << 20) /* entries of the zip's directory */

/* Whether a file's first bytes are a zip's (a local file header, "PK\3\4"). */
int torch_is_zip(const uint8_t *bytes, size_t n);

/* Reads a pytorch_model.bin, all file_size bytes of it at file (n must be
 * the whole file), into *table (st_free frees it): each tensor's name, dtype,
 * shape and bytes [begin, end) counted from the file's first byte, and
 * data_size = file_size. A failure names what it is about. */
int torch_parse(StTable *table, const uint8_t *file, size_t n, uint64_t file_size);

#endif
