#!/usr/bin/env bash
# scripts/check-includes.sh on small trees: it passes one whose includes run
# one way and fails (naming file and line) each that has an include running
# the wrong way, a folder or a public header without a layer; then it passes
# the repository itself.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
check="$here/scripts/check-includes.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0

# A tree of one file per layer, each including the layer below (and a public header).
good_tree() {
    rm -rf "$tmp/t" && mkdir -p "$tmp/t/include/attnlab"
    local prev=""
    for l in base core layers models tasks train wasm; do
        mkdir -p "$tmp/t/src/$l"
        { echo '#include <string.h>'
          [ -n "$prev" ] && echo "#include \"$prev/$prev.h\""
          echo '#include "attnlab/nn.h"'; } >"$tmp/t/src/$l/$l.c"
        echo '/* header */' >"$tmp/t/src/$l/$l.h"
        prev=$l
    done
    echo '#include "attnlab/nn.h"' >"$tmp/t/include/attnlab/seq2seq.h"
    echo '/* nn */' >"$tmp/t/include/attnlab/nn.h"
}

# expect RC PATTERN WHAT: the check on the tree exits RC and prints PATTERN (or nothing for "")
expect() {
    local out rc
    out=$("$check" "$tmp/t" 2>&1); rc=$?
    local said=0
    if [ -z "$2" ]; then [ -z "$out" ] && said=1; else grep -qF -- "$2" <<<"$out" && said=1; fi
    if [ "$rc" -eq "$1" ] && [ "$said" -eq 1 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL check-includes: $3: exit $rc, printed: $out"
    fi
}

good_tree
expect 0 "" "includes that run one way"

good_tree
echo '#include "train/train.h"' >>"$tmp/t/src/models/models.c"
expect 1 'src/models/models.c:4: models includes "train/train.h" (train)' "a model including the training loop"

good_tree
printf '#include "models/models.h"\n' >"$tmp/t/src/layers/extra.h"
expect 1 'src/layers/extra.h:1: layers includes "models/models.h"' "a layer's header including a model"

good_tree
echo '#include "attnlab/seq2seq.h"' >>"$tmp/t/src/core/core.c"
expect 1 'src/core/core.c:4: core includes "attnlab/seq2seq.h" (models)' "core including a model's public header"

good_tree
echo '#include "attnlab/tasks.h"' >>"$tmp/t/include/attnlab/seq2seq.h"
echo '/* tasks */' >"$tmp/t/include/attnlab/tasks.h"
expect 1 'include/attnlab/seq2seq.h:2: models includes "attnlab/tasks.h" (tasks)' "a public header including one above it"

good_tree
echo '#include "attnlab/unheard.h"' >>"$tmp/t/src/wasm/wasm.c"
expect 1 'includes "attnlab/unheard.h", which has no layer' "a public header with no layer"

good_tree
mkdir -p "$tmp/t/src/misc" && echo '/* x */' >"$tmp/t/src/misc/x.c"
expect 1 'src/misc/x.c: no layer' "a folder with no layer"

out=$("$check" "$here" 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL check-includes: the repository: $out"; fi

echo "check-includes: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
