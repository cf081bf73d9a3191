#!/usr/bin/env bash
# The Nemotron-Mini-4B path rehearsed on a CPU (24 GiB, no GPU): experiments/empirical_gpu.sh itself, run with
# DEVICE=cpu on the nemotron-mini-4b-random preset at its full width (hidden 3072, MLP 9216, GQA 24/8 heads, head
# dim 128, partial rotary 0.5, NemotronLayerNorm1P, vocabulary 256000) with 2 blocks instead of 32, random weights,
# bfloat16: the memory preflight, sampling, the Gram engine with every control, per-layer spectra, two TRL steps
# with GRPOVerifyCallback, the tables. Smaller than the GPU run in prompts, group sizes and tokens only (later
# options win); --reward partial gives a random model's groups mixed rewards, so that the GRPO gradient, its
# per-layer spectra and the training metrics are not all exactly zero.
#
#   bash experiments/rehearse_4b_cpu.sh [OUT_DIR]      (about 20 minutes on 2 cores; PROGRESS=0: no progress bars)
#
# 1. full_vocab: the full width and vocabulary, measurement only: the training stage at 256000 rows needs about
#    27 GiB (weights, gradients, AdamW moments and the callback's snapshots, all vocabulary-sized), more than the
#    machine has; 2. full_vocab_training: the same with the training stage, which the preflight refuses in one
#    line before the first group (the expected outcome, checked); 3. vocab32k: the training stage at the full
#    width with 32000 vocabulary rows. Each run writes memory.json: the preflight's estimate, the measured peak
#    and the estimate at the architecture's 32 blocks.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-experiments/results/rehearsal_4b_cpu}
mkdir -p "$OUT"
SMALL=(--num-layers 2 --num-prompts 1 --group-sizes 2,4 --max-new-tokens 16 --reward partial
       --degenerate-groups measure --threads 2)
[[ "${PROGRESS:-1}" == 1 ]] || SMALL+=(--no-progress)  # PROGRESS=0: no progress bars in the logs
export DEVICE=cpu TIMEOUT=${TIMEOUT:-3000}
run() {  # name, extra options...
    local name=$1; shift
    local start=$(date +%s)
    bash experiments/empirical_gpu.sh "$OUT/$name" "${SMALL[@]}" "$@" 2>&1 | tee "$OUT/$name.log"
    local rc=${PIPESTATUS[0]}
    echo "$name: exit $rc after $(( $(date +%s) - start )) s" | tee -a "$OUT/$name.log"
    return "$rc"
}
run full_vocab --train-steps 0
if run full_vocab_training; then
    echo "expected the memory preflight to refuse the training stage at the full vocabulary" >&2
    exit 1
fi
grep -q "memory preflight estimates" "$OUT/full_vocab_training.log"
run vocab32k --vocab-size 32000 --train-prompts-per-step 1 --train-group-size 4
