#!/usr/bin/env bash
# The empirical rank study at the paper's scale (Nemotron-Mini-4B) on one CUDA GPU, end to end,
# sized to finish in under 8 minutes on an H100/H200-class GPU.
#
#   NEMOTRON_PATH=/path/to/Nemotron-Mini-4B-Instruct  GSM8K_FILE=/path/to/gsm8k/test.jsonl \
#       bash experiments/empirical_gpu.sh [OUT_DIR] [extra options...]
#
# NEMOTRON_PATH  a local directory with the real checkpoint (safetensors + tokenizer). Without it
#                (no network on the GPU box) the run uses the preset nemotron-mini-4b-random: the
#                published Nemotron-Mini-4B architecture (hidden 3072, MLP 9216, 32 layers, GQA 24/8
#                heads, vocab 256000) with RANDOM WEIGHTS and a character tokenizer. Its ranks
#                measure the pipeline and the architecture, NOT the trained model: every output
#                is labelled so (config.json "model.kind": "random-weights").
# GSM8K_FILE     GSM8K-format jsonl; without it the generated arith task is used.
# DEVICE         default cuda; tests/test_empirical.py runs this script on cpu with the tiny-random
#                model appended as an extra option (later options win), to check its plumbing.
# Training: 2 steps of TRL's GRPOTrainer (needs trl) with grpo_verify.trl_callback.GRPOVerifyCallback
#                measuring every step (train.jsonl: zero-advantage groups, update sparsity, rank of W - W_start).
# TIMEOUT       seconds before the run stops (resumable; default 470: the GPU budget of one call).
# LAYER_CONTROLS set to 1 to also measure the controls' per-layer spectra (from the same engine
#                pass, but GRPO and each of the 5 controls hold a float32 gradient set, ~17 GB each
#                at 4B, ~100 GB together: a 141 GB H200, not an 80 GB H100; and every 2-D weight
#                needs a float64 SVD per control: several minutes more at 4B).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${1:-experiments/results/empirical_gpu}
shift || true
if [[ -n "${NEMOTRON_PATH:-}" ]]; then
    MODEL=(--model "$NEMOTRON_PATH" --dtype bfloat16)
    echo "model: real weights from $NEMOTRON_PATH"
else
    MODEL=(--model nemotron-mini-4b-random --dtype bfloat16)
    echo "model: Nemotron-Mini-4B architecture with RANDOM WEIGHTS (set NEMOTRON_PATH for the checkpoint)"
fi
if [[ -n "${GSM8K_FILE:-}" ]]; then
    DATA=(--task gsm8k --dataset-file "$GSM8K_FILE")
else
    DATA=(--task arith --arith-digits 2)
fi
CONTROLS=()
[[ "${LAYER_CONTROLS:-0}" == 1 ]] || CONTROLS=(--no-layer-controls)
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true; fi
start=$(date +%s)
timeout "${TIMEOUT:-470}" "$PY" -m grpo_verify.empirical "${MODEL[@]}" "${DATA[@]}" "${CONTROLS[@]}" \
    --device "${DEVICE:-cuda}" --num-prompts 4 --group-sizes 2,4,8 --max-new-tokens 128 \
    --train-steps 2 --train-prompts-per-step 2 --train-group-size 8 --lr 1e-6 \
    --out "$OUT" --resume "$@" \
    || { rc=$?; if [[ $rc == 124 || $rc == 130 || $rc == 137 ]]; then
             echo "stopped (exit code $rc) after $(( $(date +%s) - start )) s; rerun the same command to resume" \
                  "(finished items are kept)"
         else echo "failed with exit code $rc after $(( $(date +%s) - start )) s (the error is above)"; fi
         exit $rc; }
echo "finished in $(( $(date +%s) - start )) s; outputs in $OUT"
