#!/usr/bin/env bash
# Includes run one way: base -> core -> layers -> models -> tasks -> train -> wasm.
# A file may include its own layer and the layers below it, never one above:
# a model does not include the tasks or the training loops, a layer does not
# include a model. Each quoted `#include "dir/x.h"` of src/**/*.{c,h} and
# include/attnlab/*.h is ranked by its folder; a public header
# include/attnlab/X.h by the layer that implements it (PUBLIC below).
# Prints every include that runs the wrong way and exits 1 if there is one.
#   scripts/check-includes.sh [ROOT]   (default: the repository)
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}

awk '
BEGIN {
    n = split("base core layers models tasks train wasm", order, " ")
    for (i = 1; i <= n; i++) rank[order[i]] = i
    chain = "base -> core -> layers -> models -> tasks -> train -> wasm"
    # each public header: the layer of its implementation
    PUBLIC["nn.h"] = "base"; PUBLIC["attention.h"] = "core"; PUBLIC["rnn.h"] = "core"
    PUBLIC["optim.h"] = "layers"; PUBLIC["seq2seq.h"] = "models"; PUBLIC["vision.h"] = "models"
    PUBLIC["transformer.h"] = "models"; PUBLIC["gpt2.h"] = "models"
    PUBLIC["tasks.h"] = "tasks"; PUBLIC["trainer.h"] = "train"
    bad = 0
}
# the layer of a path relative to the root ("" when it has none)
function layer_of(path,    parts, k) {
    k = split(path, parts, "/")
    if (parts[1] == "src" && k >= 3 && (parts[2] in rank)) return parts[2]
    if (parts[1] == "include" && parts[2] == "attnlab" && k == 3) return (parts[3] in PUBLIC) ? PUBLIC[parts[3]] : ""
    return ""
}
FNR == 1 {
    file = FILENAME
    sub("^" root "/", "", file)
    self = layer_of(file)
    if (self == "") { printf "%s: no layer: add its folder or header to scripts/check-includes.sh\n", file; bad = 1 }
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
    if (self == "") next
    target = $0
    sub(/^[^"]*"/, "", target)
    sub(/".*$/, "", target)
    to = target ~ /^attnlab\// ? layer_of("include/" target) : layer_of("src/" target)
    if (to == "") { printf "%s:%d: includes \"%s\", which has no layer\n", file, FNR, target; bad = 1; next }
    if (rank[to] > rank[self]) {
        printf "%s:%d: %s includes \"%s\" (%s): includes run %s\n", file, FNR, self, target, to, chain
        bad = 1
    }
}
END { exit bad }
' root="$root" $(cd "$root" && find src include/attnlab -type f \( -name '*.c' -o -name '*.h' \) | sort | sed "s|^|$root/|")
