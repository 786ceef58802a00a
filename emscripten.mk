# The WebAssembly build: one standalone .wasm per variant, loaded by web/engine/.
#   web/wasm/attnlab-simd.wasm    WASM SIMD128 kernels
#   web/wasm/attnlab-scalar.wasm  the same kernels on the scalar path (NN_SCALAR)
#   web/wasm/attnlab-simd-mt.wasm the SIMD kernels for threads (NN_THREADS): atomics and bulk
#                                 memory, a shared memory the loader creates and every worker
#                                 imports (web/engine/threads/); no Emscripten pthread runtime
# Debian's Emscripten 3.1.6 needs NODE_PATH for its JS optimiser (acorn).

EMCC ?= emcc
EM_ENV := NODE_PATH=/usr/share/nodejs
WASM_DIR := web/wasm
# The engine's sources, shared with the native builds in Makefile:
#   src/base    helpers every module uses   src/core   ops (forward/backward)
#   src/layers  layers the models share, the parameter table and optimiser, shards
#   src/models  seq2seq, vision, transformer   src/tasks  generated tasks
#   src/train   the training loops
# Includes run one way, in this order (scripts/check-includes.sh).
ENGINE_DIRS := src/base src/core src/layers src/models src/tasks src/train
ENGINE_SRC := $(wildcard $(addsuffix /*.c,$(ENGINE_DIRS)))
ENGINE_HDR := $(wildcard $(addsuffix /*.h,$(ENGINE_DIRS))) $(wildcard include/attnlab/*.h)
WASM_SRC := $(ENGINE_SRC) $(wildcard src/wasm/*.c)
WASM_DEPS := $(WASM_SRC) $(ENGINE_HDR) $(wildcard src/wasm/*.h)

# No -ffast-math: builds are compared with atol + rtol*|ref|, and NaN/Inf checks must hold.
EM_FLAGS := -O3 -std=c11 -Wall -Wextra -Iinclude -Isrc \
	-sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH=1 \
	-sINITIAL_MEMORY=16777216 -sMAXIMUM_MEMORY=4294967296 -sTOTAL_STACK=1048576 \
	-sERROR_ON_UNDEFINED_SYMBOLS=1 -sABORTING_MALLOC=0 -sEXPORTED_FUNCTIONS=_malloc,_free

WASM_OUT := $(WASM_DIR)/attnlab-simd.wasm $(WASM_DIR)/attnlab-scalar.wasm $(WASM_DIR)/attnlab-simd-mt.wasm

# The threaded build links a shared, imported memory (its maximum is fixed:
# MAXIMUM_MEMORY, 65536 pages); data segments are passive and initialised once,
# by the first instance, so workers' instances leave the heap as it is.
EM_MT_FLAGS := -DNN_THREADS -matomics -mbulk-memory -Wl,--shared-memory,--import-memory

wasm: $(WASM_OUT)

$(WASM_DIR)/attnlab-simd.wasm: $(WASM_DEPS) emscripten.mk
	@mkdir -p $(WASM_DIR)
	$(EM_ENV) $(EMCC) $(EM_FLAGS) -msimd128 -mbulk-memory $(WASM_SRC) -o $@

$(WASM_DIR)/attnlab-scalar.wasm: $(WASM_DEPS) emscripten.mk
	@mkdir -p $(WASM_DIR)
	$(EM_ENV) $(EMCC) $(EM_FLAGS) -DNN_SCALAR $(WASM_SRC) -o $@

$(WASM_DIR)/attnlab-simd-mt.wasm: $(WASM_DEPS) emscripten.mk
	@mkdir -p $(WASM_DIR)
	$(EM_ENV) $(EMCC) $(EM_FLAGS) $(EM_MT_FLAGS) -msimd128 $(WASM_SRC) -o $@

.PHONY: wasm

# ---- bench -------------------------------------------------------------------
# The WASM SIMD multiply-add peak micro-kernel for npm run bench
# (tests/bench/bench.mjs builds it on demand with `make -s bench-wasm`).
BENCH_DIR := build/bench
BENCH_FLAGS := -O3 -std=c11 -Wall -Wextra -msimd128 -sSTANDALONE_WASM --no-entry

bench-wasm: $(BENCH_DIR)/peak.wasm $(BENCH_DIR)/products.wasm

$(BENCH_DIR)/peak.wasm: tests/bench/peak.c emscripten.mk
	@mkdir -p $(BENCH_DIR)
	$(EM_ENV) $(EMCC) $(BENCH_FLAGS) $< -o $@

# The engine's matrix products alone, for tests/bench/transformer-speed.mjs.
$(BENCH_DIR)/products.wasm: tests/bench/products.c src/core/vec.c src/core/vec.h src/core/simd.h emscripten.mk
	@mkdir -p $(BENCH_DIR)
	$(EM_ENV) $(EMCC) $(BENCH_FLAGS) -Iinclude -Isrc -sALLOW_MEMORY_GROWTH=1 $< src/core/vec.c -o $@

.PHONY: bench-wasm
