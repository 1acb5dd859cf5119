#!/usr/bin/env bash
# compare-peers.sh: aimeter, NVIDIA's AIPerf (PyPI aiperf==0.13.0) and
# GuideLLM (PyPI guidellm==0.8.1) measure one simulated LLM server, with one
# workload, and the simulator's own send times give the truth they are
# compared with. Ends with one markdown table (docs/peers-comparison.md
# explains it).
#
#   scripts/compare-peers.sh [OUTDIR]     (default: a new temporary folder)
#
# Workload, the same for the three tools: `aimeter serve openai --ttft TTFT
# --tpot TPOT --output-tokens OSL` on a free loopback port (a fresh server
# for every run, with --send-log), /v1/chat/completions, streaming,
# ignore_eos and max_tokens OSL (every response has exactly OSL tokens),
# synthetic prompts of about ISL tokens (the simulator's delays do not
# depend on the prompt), no warm-up, and
#  - fixed concurrency at each of POINTS, max(60, 20 x N) requests;
#  - Poisson arrivals at RATE requests/s, RATE x 20 requests.
# aimeter: `aimeter run --sut openai --concurrency N` and `--scenario Server
# --set target_qps=RATE`; AIPerf: `aiperf profile --streaming --concurrency N`
# and `--request-rate RATE --arrival-pattern poisson`; GuideLLM: `guidellm run`
# with a scenario file, profile `concurrent` (streams N) and `poisson`
# (rate RATE).
#
# Figures, each from the tool's own output file: aimeter result.json
# (steady_state.whole: completed_per_s, output_tokens_per_s; tokens.ttft_ns,
# tokens.tpot_ns), AIPerf profile_export_aiperf.json (request_throughput,
# output_token_throughput, time_to_first_token, inter_token_latency),
# GuideLLM benchmarks.json (requests_per_second, output_tokens_per_second,
# time_to_first_token_ms, inter_token_latency_ms, and time_per_output_token_ms
# in its own column because it includes the first token). "server" rows:
# the simulator's send log of that run. Its chat stream sends the role event
# (chunk 0) as soon as the request is read, then one event per token, so
# TTFT = t(chunk 1) - t(chunk 0) and TPOT = (t(chunk OSL) - t(chunk 1)) /
# (OSL - 1), per response; percentiles over responses, nearest rank.
#
# Environment: POINTS (default "1 4 16"), RATE (8), TTFT (20ms), TPOT (5ms),
# OSL (64), ISL (128), TOOLS (default "aimeter aiperf guidellm"),
# AIMETER_CACHE (default ~/.cache/aimeter), AIPERF_VENV (default
# $AIMETER_CACHE/aiperf-venv), GUIDELLM_VENV ($AIMETER_CACHE/guidellm-venv).
# The venvs are made by scripts/install-peers.sh aiperf guidellm when
# missing. AIPerf and GuideLLM need a tokenizer to build their prompts; the
# script trains an offline byte-level BPE one (300 tokens) under
# $AIMETER_CACHE/aiperf-tokenizer, as scripts/bench-aiperf.sh does.
# Client and server share the machine: note its load with the table.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
points=${POINTS:-1 4 16}
rate=${RATE:-8}
ttft=${TTFT:-20ms}
tpot=${TPOT:-5ms}
osl=${OSL:-64}
isl=${ISL:-128}
tools=${TOOLS:-aimeter aiperf guidellm}
cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
aiperf_venv=${AIPERF_VENV:-$cache/aiperf-venv}
guidellm_venv=${GUIDELLM_VENV:-$cache/guidellm-venv}
tok="$cache/aiperf-tokenizer"
out=${1:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

need=()
case " $tools " in *" aiperf "*) [ -x "$aiperf_venv/bin/aiperf" ] || need+=(aiperf) ;; esac
case " $tools " in *" guidellm "*) [ -x "$guidellm_venv/bin/guidellm" ] || need+=(guidellm) ;; esac
if [ ${#need[@]} -gt 0 ]; then
	AIMETER_CACHE=$cache scripts/install-peers.sh "${need[@]}" || { echo "scripts/install-peers.sh ${need[*]} failed" >&2; exit 1; }
fi
py="$aiperf_venv/bin/python"
[ -x "$py" ] || py="$guidellm_venv/bin/python"
if [ ! -s "$tok/tokenizer.json" ]; then
	"$py" - "$tok" <<'EOF' || { echo "could not build the tokenizer" >&2; exit 1; }
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

aimeter="$out/aimeter"
go build -o "$aimeter" ./cmd/aimeter || exit 1

# serve NAME: a fresh simulator on a free port, sending its log to
# $out/NAME.sends.jsonl; sets srv_pid and base.
serve() {
	"$aimeter" serve openai --addr 127.0.0.1:0 --ttft "$ttft" --tpot "$tpot" --output-tokens "$osl" \
		--send-log "$out/$1.sends.jsonl" >"$out/$1.server.log" 2>&1 &
	srv_pid=$!
	base=
	for _ in $(seq 100); do
		base=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$out/$1.server.log" 2>/dev/null)
		[ -n "$base" ] && return 0
		sleep 0.1
	done
	echo "the simulator did not start: $(cat "$out/$1.server.log")" >&2
	exit 1
}
unserve() { kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; }

# run_aimeter NAME KIND VALUE COUNT (KIND concurrency or rate)
run_aimeter() {
	local load
	if [ "$2" = concurrency ]; then
		load=(--concurrency "$3" --set min_duration=0 --set min_query_count="$4")
	else
		load=(--scenario Server --set target_qps="$3" --set min_duration=0 --set min_query_count="$4")
	fi
	# Exit status 3 is an INVALID verdict (too few queries for MLPerf's
	# rules), which does not matter here.
	"$aimeter" run -q --sut openai --url "$base" --input-tokens "$isl" --output-tokens "$osl" --ignore-eos \
		"${load[@]}" --output-dir "$out/$1" >"$out/$1.log" 2>&1
	local rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "aimeter $1 failed ($rc):" >&2; tail -5 "$out/$1.log" >&2; }
}

run_aiperf() {
	local load
	if [ "$2" = concurrency ]; then
		load=(--concurrency "$3")
	else
		load=(--request-rate "$3" --arrival-pattern poisson)
	fi
	"$aiperf_venv/bin/aiperf" profile -m sim --url "$base" --endpoint-type chat --streaming \
		"${load[@]}" --request-count "$4" --tokenizer "$tok" \
		--prompt-input-tokens-mean "$isl" --prompt-input-tokens-stddev 0 \
		--prompt-output-tokens-mean "$osl" --prompt-output-tokens-stddev 0 --extra-inputs ignore_eos:true \
		--use-server-token-count --no-server-metrics --no-gpu-telemetry --ui none \
		--output-artifact-dir "$out/$1" >"$out/$1.log" 2>&1 ||
		{ echo "aiperf $1 failed:" >&2; tail -5 "$out/$1.log" >&2; }
}

run_guidellm() {
	local profile
	if [ "$2" = concurrency ]; then
		profile="{\"kind\": \"concurrent\", \"streams\": [$3]}"
	else
		profile="{\"kind\": \"poisson\", \"rate\": [$3]}"
	fi
	mkdir -p "$out/$1"
	cat >"$out/$1/scenario.json" <<EOF
{"spec": {
 "backend": {"kind": "openai_http", "target": "$base", "model": "sim", "request_format": "/v1/chat/completions",
             "stream": true, "max_tokens": $osl, "extras": {"body": {"ignore_eos": true}}},
 "profile": $profile,
 "tokenizer": {"kind": "huggingface_auto", "model": "$tok"},
 "data": [{"kind": "synthetic_text", "prompt_tokens": $isl, "output_tokens": $osl}],
 "constraints": [{"kind": "max_requests", "count": $4}],
 "outputs": [{"kind": "json", "path": "$out/$1/benchmarks.json"}]
}}
EOF
	"$guidellm_venv/bin/guidellm" run -c "$out/$1/scenario.json" --disable-console-interactive >"$out/$1.log" 2>&1 ||
		{ echo "guidellm $1 failed:" >&2; tail -5 "$out/$1.log" >&2; }
}

loads=()
for n in $points; do loads+=("concurrency $n $((n * 20 > 60 ? n * 20 : 60))"); done
loads+=("rate $rate $((rate * 20))")

echo "simulator: TTFT $ttft, TPOT $tpot, $osl output tokens; prompts ~$isl tokens; results in $out"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the runs"
for l in "${loads[@]}"; do
	set -- $l
	for t in $tools; do
		name="$t-$1-$2"
		serve "$name"
		echo "$(date -u +%H:%M:%S) $t, $1 $2, $3 requests"
		"run_$t" "$name" "$1" "$2" "$3"
		unserve
	done
done
echo "machine: load average $(cut -d' ' -f1-3 /proc/loadavg) after the runs"
echo

python3 - "$out" "$osl" "$tools" "${loads[@]}" <<'EOF'
import json, os, sys
out, osl, tools, loads = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]

def nearest(v, p):  # LoadGen's index: sorted[int(n * p)]
    v = sorted(v)
    return v[min(int(len(v) * p), len(v) - 1)] if v else float("nan")

def server(name):
    t = {}
    try:
        with open(f"{out}/{name}.sends.jsonl") as f:
            for line in f:
                e = json.loads(line)
                t.setdefault(e["id"], {})[e["chunk"]] = e["unix_ns"]
    except OSError:
        return None
    ttft, tpot = [], []
    for c in t.values():
        if 0 in c and 1 in c and osl in c:
            ttft.append((c[1] - c[0]) / 1e6)
            tpot.append((c[osl] - c[1]) / (osl - 1) / 1e6)
    n = len(ttft)
    return dict(n=n, ttft50=nearest(ttft, .5), ttft90=nearest(ttft, .9), tpot50=nearest(tpot, .5), tpot90=nearest(tpot, .9))

def aimeter(name):
    d = json.load(open(f"{out}/{name}/result.json"))
    w = d["steady_state"]["whole"]
    w = w.get("metrics", w)
    tk = d["tokens"]
    return dict(n=d["samples"]["ok"], rps=w["completed_per_s"], tps=w["output_tokens_per_s"],
                ttft50=tk["ttft_ns"]["p50"] / 1e6, ttft90=tk["ttft_ns"]["p90"] / 1e6,
                tpot50=tk["tpot_ns"]["p50"] / 1e6, tpot90=tk["tpot_ns"]["p90"] / 1e6)

def aiperf(name):
    d = json.load(open(f"{out}/{name}/profile_export_aiperf.json"))
    return dict(n=d["request_count"]["avg"], rps=d["request_throughput"]["avg"], tps=d["output_token_throughput"]["avg"],
                ttft50=d["time_to_first_token"]["p50"], ttft90=d["time_to_first_token"]["p90"],
                tpot50=d["inter_token_latency"]["p50"], tpot90=d["inter_token_latency"]["p90"])

def guidellm(name):
    m = json.load(open(f"{out}/{name}/benchmarks.json"))["benchmarks"][0]["metrics"]
    s = lambda k: m[k]["successful"]
    return dict(n=s("request_latency")["count"], rps=s("requests_per_second")["mean"], tps=s("output_tokens_per_second")["mean"],
                ttft50=s("time_to_first_token_ms")["percentiles"]["p50"], ttft90=s("time_to_first_token_ms")["percentiles"]["p90"],
                tpot50=s("inter_token_latency_ms")["percentiles"]["p50"], tpot90=s("inter_token_latency_ms")["percentiles"]["p90"],
                gtpot50=s("time_per_output_token_ms")["percentiles"]["p50"])

f = lambda x, d=2: "n/a" if x is None else f"{x:.{d}f}"
print("| load | tool | requests | requests/s | output tokens/s | TTFT p50 ms | TTFT p90 ms | TPOT/ITL p50 ms | TPOT/ITL p90 ms | GuideLLM TPOT p50 ms (incl. first token) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for l in loads:
    kind, v, _ = l.split()
    load = f"concurrency {v}" if kind == "concurrency" else f"Poisson {v}/s"
    for t in tools:
        name = f"{t}-{kind}-{v}"
        try:
            r = globals()[t](name)
        except Exception as e:
            print(f"| {load} | {t} | failed: {type(e).__name__} {e} | | | | | | | |")
            continue
        print(f"| {load} | {t} | {int(r['n'])} | {f(r['rps'])} | {f(r['tps'], 0)} | {f(r['ttft50'])} | {f(r['ttft90'])} | {f(r['tpot50'], 3)} | {f(r['tpot90'], 3)} | {f(r.get('gtpot50'), 3) if 'gtpot50' in r else ''} |")
        s = server(name)
        if s and s["n"]:
            print(f"| {load} | server ({t}'s run) | {s['n']} | | | {f(s['ttft50'])} | {f(s['ttft90'])} | {f(s['tpot50'], 3)} | {f(s['tpot90'], 3)} | |")
EOF
