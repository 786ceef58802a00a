# Native builds of the core for its C tests; the WASM build lives in emscripten.mk.
#   make wasm         build web/wasm/*.wasm (needs emcc)
#   make lib          build/libattnlab.a: the engine for C programs (SSE on x86-64)
#   make native-tools optimised native programs the JS tests and benches run
#   make test-native  C tests under ASan+UBSan in three variants:
#                     simd (SSE on x86-64), scalar (NN_SCALAR), double (NN_DOUBLE, scalar),
#                     after the include check (scripts/check-includes.sh: includes run
#                     base -> core -> layers -> models -> tasks -> train -> wasm)

include emscripten.mk

CC ?= gcc
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
NATIVE_FLAGS := -O1 -g -std=c11 -Wall -Wextra -Werror -Iinclude -Isrc -Itests/native $(SAN)
# The engine itself at -O2, still under both sanitizers: nearer the -O2/-O3 builds that ship, and
# its scalar kernels (the scalar and double variants' GEMM) run 2-3x faster than at -O1, which
# made those variants most of the suite's time. The tests stay at -O1 (they compile faster).
ENGINE_NATIVE_FLAGS := $(NATIVE_FLAGS) -O2
CORE_SRC := $(ENGINE_SRC)
CORE_DEPS := $(CORE_SRC) $(ENGINE_HDR) $(wildcard tests/native/*.h)
TESTS := $(basename $(notdir $(wildcard tests/native/test_*.c)))
VARIANTS := simd scalar double
FLAGS_simd :=
FLAGS_scalar := -DNN_SCALAR
FLAGS_double := -DNN_DOUBLE

NATIVE_BINS := $(foreach v,$(VARIANTS),$(addprefix build/native/$(v)/,$(TESTS)))

# Each variant compiles the engine once into build/native/<variant>/core.a;
# every test links against it.
define native_rule
build/native/$(1)/obj/%.o: src/%.c $(ENGINE_HDR)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ENGINE_NATIVE_FLAGS) $$(FLAGS_$(1)) -c $$< -o $$@
build/native/$(1)/core.a: $(patsubst src/%.c,build/native/$(1)/obj/%.o,$(CORE_SRC))
	@rm -f $$@
	$$(AR) rcs $$@ $$^
build/native/$(1)/%: tests/native/%.c build/native/$(1)/core.a $(wildcard tests/native/*.h)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(NATIVE_FLAGS) $$(FLAGS_$(1)) $$< build/native/$(1)/core.a -o $$@ -lm
endef
$(foreach v,$(VARIANTS),$(eval $(call native_rule,$(v))))

test-native: check-includes $(NATIVE_BINS) build/lib/example_tutorial
	@bash tests/native/run.sh $(NATIVE_BINS)
	@bash tests/native/example_test.sh build/lib/example_tutorial

# ---- the native library ------------------------------------------------------
# The same sources as the WASM build, without the WASM boundary. simd.h picks
# SSE2 on x86-64 and the scalar path elsewhere (-DNN_SCALAR forces it).
LIB_FLAGS := -O2 -std=c11 -Wall -Wextra -Werror -Iinclude -Isrc
LIB_OBJ := $(patsubst src/%.c,build/lib/%.o,$(ENGINE_SRC))

build/lib/%.o: src/%.c $(ENGINE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_FLAGS) -c $< -o $@

build/libattnlab.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

lib: build/libattnlab.a

# The README's C example, built against the library as a user would (public headers only).
build/lib/example_tutorial: tests/native/example_tutorial.c build/libattnlab.a
	$(CC) -std=c11 -Wall -Wextra -Werror -Iinclude $< build/libattnlab.a -o $@ -lm

# Optimised native programs without sanitizers: the JS tests that compare the
# WASM builds with native C (tests/js/native-match.test.mjs, vision.test.mjs), on
# the library (its -O2 objects, which make test-native has already built), and the
# native training benchmark (tests/bench/train.mjs, -O3).
TOOL_FLAGS := -O2 -std=c11 -Wall -Wextra -Iinclude -Isrc
build/tools/trainer_losses: tests/native/trainer_losses.c build/libattnlab.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_FLAGS) $< build/libattnlab.a -o $@ -lm
build/tools/train_native: tests/bench/train_native.c $(CORE_SRC) $(ENGINE_HDR)
	@mkdir -p $(dir $@)
	$(CC) -O3 -std=c11 -Wall -Wextra -Iinclude -Isrc $< $(CORE_SRC) -o $@ -lm

build/tools/vision_losses: tests/native/vision_losses.c build/libattnlab.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_FLAGS) $< build/libattnlab.a -o $@ -lm

native-tools: build/tools/trainer_losses build/tools/train_native build/tools/vision_losses

clean:
	rm -rf build $(WASM_DIR)

# Fails on an include that runs the wrong way; the script's own test first.
check-includes:
	@bash tests/native/check_includes_test.sh
	@bash scripts/check-includes.sh

.PHONY: test-native check-includes native-tools lib clean

include tests/fuzz/fuzz.mk
