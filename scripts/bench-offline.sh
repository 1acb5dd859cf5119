#!/usr/bin/env bash
# bench-offline.sh: aimeter's whole process against MLPerf's C++ LoadGen,
# side by side, on the Offline null-SUT run of issue 27 (4.4 M samples):
#
#   aimeter run --scenario Offline --sut null --set target_qps=4000000 --set min_duration=1000 -q
#   lgbench --scenario=offline --sut=sync --batch=1 --offline_expected_qps=4000000 --min_duration_ms=1000
#
# in N interleaved pairs (default 5), printing each pair's wall and CPU
# seconds and peak RSS, the medians, the wall-time ratio LoadGen / aimeter
# (higher is better for aimeter) and the size of aimeter's bundle files a
# sample. lgbench is built with ../shared/tools/lgbench/build.sh when
# LGBENCH is not set. Absolute figures drift between days on shared
# machines; the ratio taken in one run is what counts.
#
# Usage: scripts/bench-offline.sh [pairs]   (environment: LGBENCH, the lgbench binary)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
pairs=${1:-5}
bench_scratch
export PATH="/usr/local/go/bin:$PATH"
go build -o "$tmp/aimeter" ./cmd/aimeter
lg=${LGBENCH:-}
if [ -z "$lg" ]; then
	../shared/tools/lgbench/build.sh ../shared/peers/mlperf-inference "$tmp/lgbench" >&2
	lg="$tmp/lgbench/lgbench"
fi
timed() { # label command...: "label wall cpu rss_kb" on stdout
	local label=$1
	shift
	/usr/bin/time -f "$label %e %U %S %M" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	tail -n 1 "$tmp/time" | awk '{printf "%s %.3f %.3f %d\n", $1, $2, $3 + $4, $5}'
}
printf "%-8s %8s %8s %10s\n" tool wall_s cpu_s peak_rss_kb
for i in $(seq "$pairs"); do
	rm -rf "$tmp/out"
	timed aimeter "$tmp/aimeter" run --scenario Offline --sut null --set target_qps=4000000 --set min_duration=1000 -q --output-dir "$tmp/out" | tee -a "$tmp/rows"
	timed lgbench "$lg" --scenario=offline --sut=sync --batch=1 --offline_expected_qps=4000000 --min_duration_ms=1000 --outdir="$tmp/lg" | tee -a "$tmp/rows"
done
am=$(awk '$1 == "aimeter" {print $2}' "$tmp/rows" | median)
lgw=$(awk '$1 == "lgbench" {print $2}' "$tmp/rows" | median)
amc=$(awk '$1 == "aimeter" {print $3}' "$tmp/rows" | median)
lgc=$(awk '$1 == "lgbench" {print $3}' "$tmp/rows" | median)
echo "median wall: aimeter $am s, LoadGen $lgw s: LoadGen/aimeter $(ratio "$lgw" "$am")x"
echo "median CPU:  aimeter $amc s, LoadGen $lgc s: LoadGen/aimeter $(ratio "$lgc" "$amc")x"
samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"]["issued"])' "$tmp/out/result.json")
echo "bundle files of the last aimeter run ($samples samples):"
ls -l "$tmp/out" | awk -v s="$samples" 'NR > 1 {printf "  %12d  %6.2f B/sample  %s\n", $5, $5 / s, $9}'
