# Native builds of the core for its C tests; the WASM build lives in emscripten.mk.
#   make wasm         build web/wasm/*.wasm (needs emcc)
#   make test-native  C tests under ASan+UBSan in three variants:
#                     simd (SSE on x86-64), scalar (NN_SCALAR), double (NN_DOUBLE, scalar)

include emscripten.mk

CC ?= gcc
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
NATIVE_FLAGS := -O1 -g -std=c11 -Wall -Wextra -Werror -Iinclude -Isrc -Itests/native $(SAN)
CORE_SRC := $(wildcard src/core/*.c) $(wildcard src/models/*.c) $(wildcard src/tasks/*.c) $(wildcard src/train/*.c)
CORE_DEPS := $(CORE_SRC) $(wildcard src/core/*.h) $(wildcard src/models/*.h) $(wildcard src/train/*.h) $(wildcard include/attnlab/*.h) $(wildcard tests/native/*.h)
TESTS := $(basename $(notdir $(wildcard tests/native/test_*.c)))
VARIANTS := simd scalar double
FLAGS_simd :=
FLAGS_scalar := -DNN_SCALAR
FLAGS_double := -DNN_DOUBLE

NATIVE_BINS := $(foreach v,$(VARIANTS),$(addprefix build/native/$(v)/,$(TESTS)))

define native_rule
build/native/$(1)/%: tests/native/%.c $(CORE_DEPS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(NATIVE_FLAGS) $$(FLAGS_$(1)) $$< $$(CORE_SRC) -o $$@ -lm
endef
$(foreach v,$(VARIANTS),$(eval $(call native_rule,$(v))))

test-native: $(NATIVE_BINS)
	@bash tests/native/run.sh $(NATIVE_BINS)

clean:
	rm -rf build $(WASM_DIR)

.PHONY: test-native clean
