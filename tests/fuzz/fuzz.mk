# libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined), included by
# the Makefile; they link the same sources as the native tests ($(CORE_SRC)),
# compiled once into build/fuzz/core.a (instrumented for coverage with
# fuzzer-no-link), so files moving between src/ folders need no change here
# and a new target costs one compile of its own file.
#   make fuzz-build    build/fuzz/fuzz_<name> for every tests/fuzz/fuzz_*.c
#   npm run fuzz       builds and runs each (tests/fuzz/run.sh)

FUZZ_CC ?= clang
FUZZ_BASE := -g -O1 -std=c11 -Wall -Wextra -Werror -Iinclude -Isrc -Itests/fuzz \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_FLAGS := $(FUZZ_BASE) -fsanitize=fuzzer,address,undefined
FUZZ_CORE_FLAGS := $(FUZZ_BASE) -fsanitize=fuzzer-no-link,address,undefined
FUZZ_TARGETS := $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS := $(addprefix build/fuzz/,$(FUZZ_TARGETS))

build/fuzz/obj/%.o: src/%.c $(ENGINE_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CORE_FLAGS) -c $< -o $@

build/fuzz/core.a: $(patsubst src/%.c,build/fuzz/obj/%.o,$(CORE_SRC))
	@rm -f $@
	$(AR) rcs $@ $^

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h build/fuzz/core.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $< build/fuzz/core.a -o $@ -lm

fuzz-build: $(FUZZ_BINS)

.PHONY: fuzz-build
