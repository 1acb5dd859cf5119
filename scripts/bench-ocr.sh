#!/usr/bin/env bash
# Measures the GB/T OCR scenario T13-1 (PaddleOCR's v4 DBNet detector on
# aimeter's generated 320×320 word images, in process through ONNX
# Runtime): SingleStream latency and Offline throughput with 1 and 2
# intra-op threads, and each sample's split into pre-processing, inference
# and post-processing (GB/T T_IPR, T_IN, T_IPO) from GB/T continuous (mode
# 0) and offline (mode 4) runs. Prints the machine's load average beside
# the figures: on a shared machine they vary with it.
#
# The third configuration, "2ns", is 2 threads with --onnx-no-spin.
#
# Usage: scripts/bench-ocr.sh [SECONDS]   (each run's minimum duration; 10)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
eval "$(scripts/setup-onnx.sh)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=1 go build -tags onnx -o "$tmp/aimeter" ./cmd/aimeter
common=(--scenario-id ocr-dbnet --ocr-images 64 -q)
ms=$((secs * 1000))
printf '%-8s %-34s %s\n' threads measurement value
for th in 1 2 2ns; do
  flags=(--onnx-threads "${th%ns}")
  [ "$th" = 2ns ] && flags+=(--onnx-no-spin)
  "$tmp/aimeter" run "${common[@]}" "${flags[@]}" --scenario SingleStream \
    --set min_duration=$ms --set min_query_count=64 --output-dir "$tmp/ss$th" > "$tmp/ss$th.txt" || true
  printf '%-8s %-34s %s ms (%s)\n' "$th" "SingleStream p90 latency" \
    "$(awk -F': ' '/90.0th percentile latency/ {printf "%.1f", $2/1e6}' "$tmp/ss$th.txt")" "$(grep -o 'Result is : [A-Z]*' "$tmp/ss$th.txt")"
  "$tmp/aimeter" run "${common[@]}" "${flags[@]}" --scenario Offline \
    --set min_duration=$ms --set target_qps=60 --output-dir "$tmp/off$th" > "$tmp/off$th.txt" || true
  printf '%-8s %-34s %s samples/s (%s)\n' "$th" "Offline throughput" \
    "$(awk -F': ' '/Samples per second/ {print $2}' "$tmp/off$th.txt")" "$(grep -o 'Result is : [A-Z]*' "$tmp/off$th.txt")"
  for mode in 0 4; do
    extra=(--duration "${secs}s")
    [ $mode = 4 ] && extra=(--jobs $((secs * 30)))
    "$tmp/aimeter" run "${common[@]}" "${flags[@]}" --arrival-mode $mode "${extra[@]}" \
      --output-dir "$tmp/gbt$mode-$th" > "$tmp/gbt$mode-$th.txt" || true
    for m in T_IPR T_IN T_IPO T_IP; do
      printf '%-8s %-34s %s ms (p50 %s)\n' "$th" "GB/T mode $mode mean $m" \
        "$(awk -v m=$m '$1 == m {print $4}' "$tmp/gbt$mode-$th.txt")" "$(awk -v m=$m '$1 == m {print $5}' "$tmp/gbt$mode-$th.txt")"
    done
    [ $mode = 4 ] && printf '%-8s %-34s %s\n' "$th" "GB/T mode 4 throughput" "$(grep -o 'Throughput: .*' "$tmp/gbt$mode-$th.txt")"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
