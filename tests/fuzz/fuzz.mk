# libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined), included by
# the Makefile; they link the same sources as the native tests ($(CORE_SRC)),
# so files moving between src/ folders need no change here.
#   make fuzz-build    build/fuzz/fuzz_<name> for every tests/fuzz/fuzz_*.c
#   npm run fuzz       builds and runs each (tests/fuzz/run.sh)

FUZZ_CC ?= clang
FUZZ_FLAGS := -g -O1 -std=c11 -Wall -Wextra -Werror -Iinclude -Isrc -Itests/fuzz \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_TARGETS := $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS := $(addprefix build/fuzz/,$(FUZZ_TARGETS))

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(CORE_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $< $(CORE_SRC) -o $@ -lm

fuzz-build: $(FUZZ_BINS)

.PHONY: fuzz-build
