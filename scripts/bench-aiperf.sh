#!/usr/bin/env bash
# bench-aiperf.sh: aimeter's OpenAI-compatible client side by side with
# NVIDIA's AIPerf (PyPI aiperf==0.13.0), both against one netbench
# NullServer on loopback (127.0.0.1), in interleaved rounds, ending with a
# markdown table.
#
#   scripts/bench-aiperf.sh [ROUNDS]          (default 3)
#
# Environment: SECS (seconds per measurement, default 5), CONNS (requests in
# flight, default 64), AIMETER_CACHE (default ~/.cache/aimeter; the script
# creates $AIMETER_CACHE/aiperf-venv with only aiperf==0.13.0 when missing,
# through scripts/install-peers.sh aiperf,
# and a local tokenizer, see below). Client and server share the machine:
# only the ratios of one run mean anything.
#
# Each round runs, back to back:
#  - aimeter: `aimeter run -q --sut openai --stream=false --concurrency CONNS
#    --max-conns CONNS --input-tokens 8 --output-tokens 8` bounded to SECS
#    seconds (min_duration), exactly as row 1 of scripts/bench-net.sh.
#    Rate: its "Completed samples per second".
#  - AIPerf: `aiperf profile --endpoint-type chat` (non-streaming is its
#    default) with --concurrency CONNS --benchmark-duration SECS, synthetic
#    prompts of 8 input / 8 output tokens, --use-server-token-count (no
#    client-side tokenising of responses, as aimeter does none), no
#    server-metrics or GPU-telemetry scraping, --ui none. Rate: its
#    export's request_throughput (completed requests over its benchmark
#    duration); requests: its request_count (successes). AIPerf sends
#    no warm-up requests unless asked. AIPerf needs a tokenizer to build
#    its prompts; its "builtin" one downloads tiktoken's o200k_base, so the
#    script builds an offline byte-level BPE tokenizer (300 tokens, trained
#    locally on one sentence) under $AIMETER_CACHE/aiperf-tokenizer.
#
# CPU per request (µs), three figures per tool:
#  - "whole": user+sys CPU of the client's whole process tree from
#    /usr/bin/time -f "%U %S" (getrusage of the process plus the children
#    it waited for), over its successful requests. Includes start-up,
#    configuration and writing results: an upper bound.
#  - "net": the same, less the CPU of a start-up run (aimeter: 10 requests
#    one at a time, as bench-net.sh; AIPerf: 64 requests at CONNS in
#    flight, so that it spawns the same services), measured once before the
#    rounds. This is per-request cost with fixed costs taken out.
#  - "machine": a cross-check that does not depend on the client waiting for
#    its children. AIPerf is a tree of Python processes (system controller,
#    dataset/timing/records managers, worker manager, workers, record
#    processors); if one were not waited for, /usr/bin/time would miss it.
#    So the script also reads the machine's busy CPU time (/proc/stat:
#    user+nice+system+irq+softirq) before and after each run, subtracts the
#    server process's own utime+stime (/proc/PID/stat) over the same span,
#    and divides by the requests. It includes everything else the machine
#    did meanwhile (background noise), so it is ≥ "whole" when all
#    children are counted; a "machine" far above "whole" means uncounted
#    children. The script also warns if any aiperf process outlives a run.
set -euo pipefail
rounds=${1:-3}
secs=${SECS:-5}
conns=${CONNS:-64}
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
venv="$cache/aiperf-venv"
tok="$cache/aiperf-tokenizer"
[ -x /usr/bin/time ] || { echo "bench-aiperf.sh needs /usr/bin/time (GNU time)" >&2; exit 1; }

AIMETER_CACHE=$cache scripts/install-peers.sh aiperf >/dev/null || { echo "scripts/install-peers.sh aiperf failed" >&2; exit 1; }
if [ ! -s "$tok/tokenizer.json" ]; then
	"$venv/bin/python" - "$tok" <<'EOF'
import sys
from tokenizers import ByteLevelBPETokenizer
from transformers import PreTrainedTokenizerFast
t = ByteLevelBPETokenizer()
t.train_from_iterator(["the quick brown fox jumps over the lazy dog " * 50],
                      vocab_size=300, min_frequency=1, show_progress=False)
PreTrainedTokenizerFast(tokenizer_object=t._tokenizer, bos_token="<s>",
                        eos_token="</s>").save_pretrained(sys.argv[1])
EOF
fi
aiperf_version=$("$venv/bin/aiperf" --version 2>/dev/null | tail -1)

. scripts/bench-lib.sh
bench_scratch

echo "building aimeter and netbench into $tmp"
go build -o "$tmp/aimeter" ./cmd/aimeter
go build -o "$tmp/netbench" ./internal/netbench/cmd/netbench

cpu_s() { awk '/^[0-9.]+ [0-9.]+$/ {c=$1+$2} END {printf "%.3f", c}' "$1"; }
# per_req SECONDS MINUS_SECONDS REQUESTS: (SECONDS − MINUS) per request, µs.
per_req() { awk -v c="$1" -v s="$2" -v n="$3" 'BEGIN {if (n+0 > 0) printf "%.1f", (c-s)*1e6/n; else print "n/a"}'; }

start_null_server
srv=$null_pid

hz=$(getconf CLK_TCK)
busy() { awk '/^cpu / {print $2+$3+$4+$7+$8}' /proc/stat; }
srv_ticks() { awk '{print $14+$15}' "/proc/$srv/stat"; }
# mark / machine_s: busy CPU seconds of the machine since mark, less the server's.
mark() { m_busy=$(busy) m_srv=$(srv_ticks); }
machine_s() { awk -v b0="$m_busy" -v b1="$(busy)" -v s0="$m_srv" -v s1="$(srv_ticks)" -v hz="$hz" 'BEGIN {printf "%.3f", ((b1-b0)-(s1-s0))/hz}'; }
leftovers() { if pgrep -f "$venv/bin/" >/dev/null; then echo "warning: aiperf processes outlived the run:" >&2; pgrep -af "$venv/bin/" >&2; fi; }

aimeter_args=(run -q --sut openai --url "$base" --stream=false --input-tokens 8 --output-tokens 8)
aiperf_args=(profile -m null --url "$base" --endpoint-type chat --concurrency "$conns"
	--tokenizer "$tok" --prompt-input-tokens-mean 8 --prompt-input-tokens-stddev 0
	--prompt-output-tokens-mean 8 --prompt-output-tokens-stddev 0 --use-server-token-count
	--no-server-metrics --no-gpu-telemetry --ui none --export-level summary)
# aiperf_field DIR KEY: the avg of KEY in AIPerf's JSON export.
aiperf_field() { "$venv/bin/python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print((d.get(sys.argv[2]) or {}).get("avg", "n/a"))' "$1/profile_export_aiperf.json" "$2" 2>/dev/null || echo n/a; }

# Start-up runs (fixed costs), once.
/usr/bin/time -o "$tmp/a.startup" -f "%U %S" "$tmp/aimeter" "${aimeter_args[@]}" --concurrency 1 \
	--set min_duration=0 --set min_query_count=10 --set target_latency=1 \
	--output-dir "$tmp/run-a-startup" >/dev/null 2>&1 || true
a_start=$(cpu_s "$tmp/a.startup")
/usr/bin/time -o "$tmp/p.startup" -f "%U %S" "$venv/bin/aiperf" "${aiperf_args[@]}" --request-count 64 \
	--output-artifact-dir "$tmp/run-p-startup" >"$tmp/p.startup.out" 2>&1 || true
p_start=$(cpu_s "$tmp/p.startup")
leftovers
echo "NullServer $base, $rounds rounds of ${secs}s, $conns in flight; aiperf $aiperf_version"
echo "start-up CPU: aimeter ${a_start}s (10 requests), AIPerf ${p_start}s (64 requests)"

: >"$tmp/rows"
for r in $(seq "$rounds"); do
	rm -rf "$tmp/run-a"
	mark
	/usr/bin/time -o "$tmp/a.cpu" -f "%U %S" "$tmp/aimeter" "${aimeter_args[@]}" \
		--concurrency "$conns" --max-conns "$conns" --request-timeout 10s \
		--set min_duration=$((secs * 1000)) --set min_query_count=1 --set target_latency=0.01 \
		--output-dir "$tmp/run-a" >"$tmp/a.out" 2>&1 || true
	am=$(machine_s)
	a=$(sed -n 's/^Completed samples per second : \([0-9.]*\).*/\1/p' "$tmp/a.out" | awk '{printf "%.0f", $1}')
	an=$(sed -n 's/^  requests \([0-9]*\), errors \([0-9]*\).*/\1 \2/p' "$tmp/a.out")
	[ -n "$a" ] || { echo "the aimeter run failed:" >&2; tail -20 "$tmp/a.out" >&2; a=n/a; }
	ac=$(cpu_s "$tmp/a.cpu")
	aw=$(per_req "$ac" 0 "${an%% *}") anet=$(per_req "$ac" "$a_start" "${an%% *}") amach=$(per_req "$am" 0 "${an%% *}")

	rm -rf "$tmp/run-p"
	mark
	/usr/bin/time -o "$tmp/p.cpu" -f "%U %S" "$venv/bin/aiperf" "${aiperf_args[@]}" \
		--benchmark-duration "$secs" --benchmark-grace-period 10 \
		--output-artifact-dir "$tmp/run-p" >"$tmp/p.out" 2>&1 || true
	pm=$(machine_s)
	leftovers
	p=$(aiperf_field "$tmp/run-p" request_throughput | awk '$1 != "n/a" {printf "%.0f", $1} $1 == "n/a" {print}')
	pn=$(aiperf_field "$tmp/run-p" request_count | awk '$1 != "n/a" {printf "%.0f", $1} $1 == "n/a" {print}')
	pcomp=$(aiperf_field "$tmp/run-p" completed_request_count | awk '$1 != "n/a" {printf "%.0f", $1} $1 == "n/a" {print}')
	pconc=$(aiperf_field "$tmp/run-p" effective_concurrency | awk '$1 != "n/a" {printf "%.1f", $1} $1 == "n/a" {print}')
	[ "$p" != n/a ] || { echo "the AIPerf run failed:" >&2; grep -v '^\s*$' "$tmp/p.out" | tail -20 >&2; }
	pc=$(cpu_s "$tmp/p.cpu")
	pw=$(per_req "$pc" 0 "$pn") pnet=$(per_req "$pc" "$p_start" "$pn") pmach=$(per_req "$pm" 0 "$pn")

	echo "round $r: aimeter $a req/s (requests/errors $an), AIPerf $p req/s (successes $pn of $pcomp, mean in flight $pconc); CPU µs/request whole/net/machine: aimeter $aw/$anet/$amach, AIPerf $pw/$pnet/$pmach; aimeter/AIPerf rate $(ratio "$a" "$p"), AIPerf/aimeter CPU whole $(ratio "$pw" "$aw") net $(ratio "$pnet" "$anet")"
	echo "$a $p $aw $anet $amach $pw $pnet $pmach $(ratio "$a" "$p") $(ratio "$pw" "$aw") $(ratio "$pnet" "$anet") $(ratio "$pmach" "$amach") $pconc" >>"$tmp/rows"
done
col() { awk -v c="$1" '$c != "n/a" {print $c}' "$tmp/rows" | median; }

echo
echo "Medians of $rounds interleaved rounds (${secs}s each, $conns in flight, loopback NullServer; ratios are medians of per-round ratios):"
echo
echo "| figure | aimeter | AIPerf $aiperf_version | ratio |"
echo "|---|---|---|---|"
echo "| completed requests/s | $(col 1) | $(col 2) | aimeter/AIPerf $(col 9) |"
echo "| client CPU µs/request, whole process tree | $(col 3) | $(col 6) | AIPerf/aimeter $(col 10) |"
echo "| client CPU µs/request, net of start-up | $(col 4) | $(col 7) | AIPerf/aimeter $(col 11) |"
echo "| machine CPU − server CPU, µs/request (cross-check) | $(col 5) | $(col 8) | AIPerf/aimeter $(col 12) |"
echo "| start-up CPU, s (subtracted for \"net\") | $a_start | $p_start | |"
echo "| AIPerf mean requests in flight (effective_concurrency) | | $(col 13) | |"
