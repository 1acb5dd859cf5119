#!/usr/bin/env bash
# bench-netmem.sh: issue 43's memory figure, how much a network run keeps
# per request. Starts `aimeter serve openai` (no delays, 16 tokens an
# answer) on loopback and runs `aimeter run --sut openai --concurrency 64
# --stream` against it for each duration, sampling the run's resident set
# (VmRSS) every half second. For each run it prints the requests, the RSS
# when the load ended (the last sample before the run's duration was up),
# the peak RSS of the whole process (GNU time's maximum, which includes
# writing the bundle and the report) and both per request; then the slope
# between consecutive runs, which cancels the fixed costs (the binary, the
# data set, the record stream's row groups, which fill in the first 10 s or
# so): between the two longest runs, the bytes a further request costs at
# steady state. Target (issue 43): ≤ 200 bytes a request. The process's
# RSS follows its heap with Go's collector's slack (GOGC=100: up to twice
# the live heap, and RSS is sampled anywhere in that cycle), so the table
# also gives the live heap after the last collection before the load ended
# (from GODEBUG=gctrace=1), the figure TestRunMemoryPerRequest (sut/openai)
# bounds in-process, and the largest live heap any collection of the
# process found (the end of the run included: the steady-state analysis,
# the bundle's writing), the figure TestEndOfRunMemoryPerRequest bounds.
# The run competes for the machine's processors with whatever else runs
# there: a loaded machine issues fewer requests, but their cost in memory
# is the same.
#
#   scripts/bench-netmem.sh [SECONDS...]        (default: 5 20 60)
#
# Environment: CONNS (default 64), AIMETER_BIN (an aimeter binary to measure
# instead of building this tree's, e.g. another commit's build).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
durations=("$@")
[ $# -gt 0 ] || durations=(5 20 60)
conns=${CONNS:-64}
[ -x /usr/bin/time ] || { echo "bench-netmem.sh needs /usr/bin/time (GNU time)" >&2; exit 1; }
. scripts/bench-lib.sh
bench_scratch
bin=${AIMETER_BIN:-$tmp/aimeter}
[ -n "${AIMETER_BIN:-}" ] || go build -o "$bin" ./cmd/aimeter
mkfifo "$tmp/hold"
"$bin" serve openai --addr 127.0.0.1:0 --ttft 0 --tpot 0 --output-tokens 16 <"$tmp/hold" >"$tmp/serve.out" 2>&1 &
pids+=("$!")
exec 9>"$tmp/hold"
base=$(wait_for "$tmp/serve.out" 's/.*listening on \(http:[^ ]*\).*/\1/p')
case $base in http://127.0.0.1:*) ;; *) echo "the server is not on 127.0.0.1: $base" >&2; exit 1 ;; esac
echo "server: $base (aimeter serve openai, TTFT 0, TPOT 0, 16 output tokens); $conns in flight"
echo
echo "| seconds | requests | live heap at the end of the load (MB) | B/request | RSS at the end of the load (MB) | B/request | peak live heap (MB) | B/request | peak RSS (MB) | B/request |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
: >"$tmp/rows"
for secs in "${durations[@]}"; do
	rm -rf "$tmp/run"
	GODEBUG=gctrace=1 /usr/bin/time -o "$tmp/time" -f "%M" "$bin" run -q --no-store --sut openai --url "$base" --concurrency "$conns" \
		--max-conns "$conns" --stream --output-tokens 16 --duration "${secs}s" --output-dir "$tmp/run" >"$tmp/run.out" 2>"$tmp/run.err" &
	tpid=$!
	# The aimeter child of GNU time, whose VmRSS is sampled.
	apid=""
	for _ in $(seq 50); do
		apid=$(pgrep -P "$tpid" || true)
		[ -n "$apid" ] && break
		sleep 0.1
	done
	start=$(date +%s.%N)
	: >"$tmp/rss"
	while kill -0 "$tpid" 2>/dev/null; do
		r=$(awk '/^VmRSS/ {print $2}' "/proc/$apid/status" 2>/dev/null || true)
		[ -n "$r" ] && echo "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}') $r" >>"$tmp/rss"
		sleep 0.5
	done
	wait "$tpid" || { echo "the run of ${secs}s failed:" >&2; tail -20 "$tmp/run.out" "$tmp/run.err" >&2; exit 1; }
	n=$(sed -n 's/^  requests \([0-9]*\), errors.*/\1/p' "$tmp/run.out")
	load_kb=$(awk -v s="$secs" '$1 <= s + 0.5 {r = $2} END {print r + 0}' "$tmp/rss")
	peak_kb=$(tail -1 "$tmp/time")
	# gctrace lines: "gc N @Ts P%: … A->B->C MB, …": C is the live heap.
	live_kb=$(awk -v s="$secs" '/^gc [0-9]+ @/ {t = substr($3, 2) + 0; split($11, h, "->"); if (t <= s) l = h[3] * 1024} END {print l + 0}' "$tmp/run.err")
	top_kb=$(awk '/^gc [0-9]+ @/ {split($11, h, "->"); if (h[3] * 1024 > m) m = h[3] * 1024} END {print m + 0}' "$tmp/run.err")
	echo "$secs $n $load_kb $peak_kb $live_kb $top_kb" >>"$tmp/rows"
	awk -v s="$secs" -v n="$n" -v l="$load_kb" -v p="$peak_kb" -v h="$live_kb" -v m="$top_kb" \
		'BEGIN {printf "| %d | %d | %.1f | %.0f | %.1f | %.0f | %.1f | %.0f | %.1f | %.0f |\n", s, n, h/1024, h*1024/n, l/1024, l*1024/n, m/1024, m*1024/n, p/1024, p*1024/n}'
done
echo
sort -n "$tmp/rows" | awk 'NR > 1 && $2 > n0 {printf "slope %ds → %ds: %.0f B/request of live heap and %.0f of RSS at the end of the load, %.0f of live heap and %.0f of RSS at the peak (%d more requests)\n", s0, $1, ($5 - h0) * 1024 / ($2 - n0), ($3 - l0) * 1024 / ($2 - n0), ($6 - m0) * 1024 / ($2 - n0), ($4 - p0) * 1024 / ($2 - n0), $2 - n0}
	{s0 = $1; n0 = $2; l0 = $3; p0 = $4; h0 = $5; m0 = $6}'
