#!/usr/bin/env bash
# bench-net.sh: every client-performance figure of issue 9, measured side by
# side on loopback, in interleaved rounds, ending with a markdown table.
#
#   scripts/bench-net.sh [ROUNDS]          (default 3)
#
# Environment: SECS (seconds per throughput measurement, default 5), CONNS
# (HTTP requests in flight, default 64), GRPC_CONC (gRPC requests in
# flight, default 32, the bare loop's 16 × GOMAXPROCS on 2 cores), STREAMS
# (concurrent streams of the memory row, default 10000), AIMETER_CACHE
# (where scripts/install-peers.sh put wrk, vegeta and ghz; default
# ~/.cache/aimeter). A peer tool that is not installed skips its row with a
# message. Client and servers share the machine: only the ratios of one run
# mean anything, and a busy machine moves every figure.
#
# What each row measures:
#
#  1. HTTP, non-streaming, against one netbench NullServer (a fixed
#     OpenAI-shaped answer; it also lists the model "null" for the adapter's
#     check): wrk, netbench's bare net/http loop, vegeta at its maximum rate
#     (-rate=0, CONNS workers) and `aimeter run --sut openai --stream=false
#     --concurrency CONNS`. All four keep CONNS requests in flight over
#     reused connections, so they load the server the same way. The adapter
#     runs in aimeter's fixed-concurrency mode, not Offline: Offline issues
#     the whole query at once and the openai adapter never queues a request
#     for a connection (Options.MaxConns only sizes the idle pool), so
#     Offline opens one connection per sample in flight, exhausts the file
#     descriptors of client and server and measures connection set-up
#     instead of the client's maximum rate; a Server run measures the rate
#     it is asked for, not the maximum. Rates are completed requests per
#     second (the adapter's "Completed samples per second").
#  2. Client CPU per request: user+sys CPU of the aimeter process
#     (/usr/bin/time) over its requests, in the same rounds as row 1, and of
#     the bare loop's process. Twice for aimeter: the whole process (an upper
#     bound), and net of its fixed costs (start-up, the check, the data set,
#     writing the bundle: the CPU of a 10-request run, subtracted). Writing
#     each record to the bundle stays in the net figure, as it is per
#     request. The same net figure is given for the gRPC adapter, whose
#     start-up loads the demo's data set.
#  3. gRPC: `aimeter run --sut kserve --grpc --concurrency GRPC_CONC`, the
#     bare grpc-go loop of sut/kserve's BenchmarkGRPC/bare (GRPC_CONC
#     goroutines, one connection) and ghz -c GRPC_CONC, against one
#     `aimeter serve kserve --null-model` (no model run: the figures are the
#     clients').
#  4. Open loop: three runs of `aimeter run --sut openai --stream=false
#     --scenario Server --set target_qps=20000 --max-conns 512` (3 s)
#     against the NullServer (--max-conns bounds the connections, so a run
#     that falls behind queues in the client rather than opening a
#     connection per late request): the client block's p99 send lateness (issue → request
#     written), and from the records (aimeter export) the p99 of issued − scheduled, the
#     samples issued more than 100 µs late and the samples scheduled but
#     never issued (settings.json's pass bounds minus the records).
#  5. Stream timestamps: one stream at a time (SingleStream) against a fresh
#     `aimeter serve openai --tpot 1ms --send-log FILE`; streamjoin
#     (internal/netbench/cmd/streamjoin) joins the client's token times
#     (tokens.parquet on the run clock + the pass's start_unix_ns) with the
#     server's send log, pairing requests by order, and prints p50/p99 of
#     client arrival − server send and the p99 of its absolute value (the
#     server stamps just after its write, so a descheduled server can be
#     passed by the client).
#  6. STREAMS concurrent streams held by one aimeter process against one
#     `aimeter serve openai` whose streams last about 10 s (100 tokens at a
#     TPOT of 100 ms): peak RSS of the client (/usr/bin/time %M) and of the
#     server (VmHWM), each divided by STREAMS; ulimit -n is raised for both.
#  7. Streams, client side (issue 27): wrk, the bare loop and `aimeter run
#     --sut openai --concurrency CONNS` with each HTTP client (--http-client
#     h1, the default for http://, and net/http) against the NullServer
#     streaming 16 events an answer (scripts/bench-stream.sh runs this row
#     alone): req/s and client CPU µs per request, ratios to wrk and to the
#     bare loop. Run after rows 1 and 2; in the table after row 1.
set -euo pipefail
rounds=${1:-3}
secs=${SECS:-5}
conns=${CONNS:-64}
gconc=${GRPC_CONC:-32}
streams=${STREAMS:-10000}
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
wrk="$cache/bin/wrk"
vegeta="$cache/bin/vegeta"
ghz="$cache/bin/ghz"
[ -x /usr/bin/time ] || { echo "bench-net.sh needs /usr/bin/time (GNU time) for the CPU and RSS rows" >&2; exit 1; }

. scripts/bench-lib.sh
bench_scratch

echo "building aimeter, netbench, streamjoin and the kserve benchmark into $tmp"
go build -o "$tmp/aimeter" ./cmd/aimeter
go build -o "$tmp/netbench" ./internal/netbench/cmd/netbench
go build -o "$tmp/streamjoin" ./internal/netbench/cmd/streamjoin
go test -c -o "$tmp/kserve.test" ./sut/kserve

# ---- rows 1 and 2: HTTP non-streaming, and CPU per request -----------------
start_null_server
url="$base/v1/chat/completions"
body='{"model":"null","messages":[{"role":"user","content":"hello"}],"max_tokens":8}'
printf '%s' "$body" >"$tmp/body.json"
printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' "'$body'" >"$tmp/post.lua"
printf 'POST %s\nContent-Type: application/json\n@%s\n' "$url" "$tmp/body.json" >"$tmp/targets"
have_wrk=1 have_vegeta=1 have_ghz=1
[ -x "$wrk" ] || { have_wrk=0; echo "skip wrk: $wrk not installed (scripts/install-peers.sh)"; }
[ -x "$vegeta" ] || { have_vegeta=0; echo "skip vegeta: $vegeta not installed (scripts/install-peers.sh)"; }
[ -x "$ghz" ] || { have_ghz=0; echo "skip ghz: $ghz not installed (scripts/install-peers.sh)"; }
http_startup=$(startup_cpu http --sut openai --url "$base" --stream=false --input-tokens 8 --output-tokens 8)
echo "HTTP: NullServer $base, $rounds rounds of ${secs}s, $conns in flight; adapter start-up CPU ${http_startup}s"
: >"$tmp/http"
for r in $(seq "$rounds"); do
	w=n/a v=n/a
	if [ $have_wrk = 1 ]; then
		w=$("$wrk" -t2 -c"$conns" -d"${secs}s" -s "$tmp/post.lua" "$url" | awk '/^Requests\/sec/ {printf "%.0f", $2}')
	fi
	/usr/bin/time -o "$tmp/bare.cpu" -f "%U %S" "$tmp/netbench" bare -url "$url" -c "$conns" -d "${secs}s" -body "$body" >"$tmp/bare.out"
	b=$(awk '{printf "%.0f", $4}' "$tmp/bare.out")
	bcpu=$(cpu_us "$tmp/bare.cpu" "$(awk '{print $1}' "$tmp/bare.out")")
	if [ $have_vegeta = 1 ]; then
		v=$("$vegeta" attack -rate=0 -workers="$conns" -max-workers="$conns" -duration="${secs}s" -targets="$tmp/targets" |
			"$vegeta" report -type=json | sed -n 's/.*"throughput":\([0-9.]*\).*/\1/p' | awk '{printf "%.0f", $1}')
	fi
	rm -rf "$tmp/run-http"
	/usr/bin/time -o "$tmp/adapter.cpu" -f "%U %S" "$tmp/aimeter" run -q --sut openai --url "$base" --stream=false \
		--concurrency "$conns" --max-conns "$conns" --input-tokens 8 --output-tokens 8 --request-timeout 10s \
		--set min_duration=$((secs * 1000)) --set min_query_count=1 --set target_latency=0.01 \
		--output-dir "$tmp/run-http" >"$tmp/adapter.out" 2>&1 || true
	a=$(sed -n 's/^Completed samples per second : \([0-9.]*\).*/\1/p' "$tmp/adapter.out" | awk '{printf "%.0f", $1}')
	an=$(sed -n 's/^  requests \([0-9]*\), errors \([0-9]*\).*/\1 \2/p' "$tmp/adapter.out")
	acpu=$(cpu_us "$tmp/adapter.cpu" "${an%% *}")
	anet=$(net_cpu_us "$tmp/adapter.cpu" "$http_startup" "${an%% *}")
	[ -n "$a" ] || { echo "the adapter run failed:" >&2; tail -20 "$tmp/adapter.out" >&2; a=n/a; }
	echo "round $r: wrk $w  bare $b  vegeta $v  adapter $a req/s (adapter requests/errors: $an); CPU µs/request: adapter $acpu ($anet net of start-up), bare $bcpu; adapter/bare $(ratio "$a" "$b"), adapter/vegeta $(ratio "$a" "$v")"
	echo "$w $b $v $a $acpu $bcpu $anet $(ratio "$a" "$b") $(ratio "$a" "$v") $(ratio "$a" "$w") $(ratio "$acpu" "$bcpu") $(ratio "$anet" "$bcpu")" >>"$tmp/http"
done
col() { awk -v c="$1" '$c != "n/a" {print $c}' "$2" | median; }
hw=$(col 1 "$tmp/http") hb=$(col 2 "$tmp/http") hv=$(col 3 "$tmp/http") ha=$(col 4 "$tmp/http")
hacpu=$(col 5 "$tmp/http") hbcpu=$(col 6 "$tmp/http") hanet=$(col 7 "$tmp/http")
# The ratios are the medians of each round's ratio: two clients measured
# back to back share the machine's load of that moment.
rab=$(col 8 "$tmp/http") rav=$(col 9 "$tmp/http") raw=$(col 10 "$tmp/http") rcpu=$(col 11 "$tmp/http") rnet=$(col 12 "$tmp/http")

# ---- row 7: streaming (issue 27) ------------------------------------------------
# The NullServer streams 16 events (14 tokens) to a request that asks for a
# stream; wrk, the bare loop and the adapter with each HTTP client.
sbody='{"model":"null","stream":true,"messages":[{"role":"user","content":"hello"}],"max_tokens":14}'
stream_startup=$(startup_cpu stream --sut openai --url "$base" --input-tokens 8 --output-tokens 14)
echo "streams: NullServer $url, 16 events an answer, $rounds rounds of ${secs}s, $conns in flight; adapter start-up CPU ${stream_startup}s"
stream_rounds "$rounds" "$secs" "$conns" "$url" "$sbody" "$stream_startup" "h1:--http-client h1" "nethttp:--http-client net/http"
st_w=$(stream_median wrk 2) st_wc=$(stream_median wrk 3) st_b=$(stream_median bare 2) st_bc=$(stream_median bare 3)
st_h=$(stream_median h1 2) st_hc=$(stream_median h1 3) st_n=$(stream_median nethttp 2) st_nc=$(stream_median nethttp 3)
st_hw=$(stream_ratio h1 2 wrk) st_hcw=$(stream_ratio h1 3 wrk) st_hb=$(stream_ratio h1 2 bare)
st_nw=$(stream_ratio nethttp 2 wrk) st_ncw=$(stream_ratio nethttp 3 wrk) st_nb=$(stream_ratio nethttp 2 bare)

# ---- row 3: gRPC ---------------------------------------------------------------
"$tmp/aimeter" serve kserve --null-model --http '' --grpc 127.0.0.1:0 >"$tmp/kserve.out" 2>&1 &
pids+=($!)
gaddr=$(wait_for "$tmp/kserve.out" 's/^KServe v2 gRPC: \([^ ]*\) .*/\1/p')
grpc_startup=$(startup_cpu grpc --sut kserve --grpc --url "$gaddr")
echo "gRPC: aimeter serve kserve --null-model at $gaddr, $gconc in flight; adapter start-up CPU ${grpc_startup}s"
payload=$(head -c 3136 /dev/zero | base64 -w0)
printf '{"model_name":"fashion-mlp","inputs":[{"name":"input","datatype":"FP32","shape":[1,784]}],"outputs":[{"name":"logits"}],"raw_input_contents":["%s"]}' "$payload" >"$tmp/req.json"
: >"$tmp/grpc"
for r in $(seq "$rounds"); do
	rm -rf "$tmp/run-grpc"
	/usr/bin/time -o "$tmp/gadapter.cpu" -f "%U %S" "$tmp/aimeter" run -q --sut kserve --grpc --url "$gaddr" \
		--concurrency "$gconc" --request-timeout 10s \
		--set min_duration=$((secs * 1000)) --set min_query_count=1 --set target_latency=0.01 \
		--output-dir "$tmp/run-grpc" >"$tmp/gadapter.out" 2>&1 || true
	a=$(sed -n 's/^Completed samples per second : \([0-9.]*\).*/\1/p' "$tmp/gadapter.out" | awk '{printf "%.0f", $1}')
	an=$(sed -n 's/^  requests \([0-9]*\), errors \([0-9]*\).*/\1 \2/p' "$tmp/gadapter.out")
	late=$(sed -n 's/^  send lateness .* p99 \([^,]*\),.*/\1/p' "$tmp/gadapter.out")
	acpu=$(net_cpu_us "$tmp/gadapter.cpu" "$grpc_startup" "${an%% *}")
	[ -n "$a" ] || { echo "the gRPC adapter run failed:" >&2; tail -20 "$tmp/gadapter.out" >&2; a=n/a; }
	ns=$(AIMETER_BENCH_GRPC_ADDR=$gaddr "$tmp/kserve.test" -test.run '^$' -test.bench '^BenchmarkGRPC$/^bare$' \
		-test.benchtime "${secs}s" -test.cpu 2 | awk '/GRPC\/bare/ {print $3}')
	b=$(awk -v ns="$ns" 'BEGIN {if (ns+0 > 0) printf "%.0f", 1e9/ns; else print "n/a"}')
	g=n/a
	if [ $have_ghz = 1 ]; then
		g=$("$ghz" --insecure --proto sut/kserve/inferencepb/grpc_service.proto \
			--call inference.GRPCInferenceService/ModelInfer -D "$tmp/req.json" \
			-c "$gconc" -z "${secs}s" -O json "$gaddr" | sed -n 's/.*"rps":\([0-9.]*\).*/\1/p' | awk '{printf "%.0f", $1}')
	fi
	echo "round $r: adapter $a (requests/errors $an, CPU $acpu µs/request net of start-up, send lateness p99 $late)  bare grpc-go $b  ghz $g req/s; adapter/bare $(ratio "$a" "$b"), adapter/ghz $(ratio "$a" "$g")"
	echo "$a $b $g $acpu $(ratio "$a" "$b") $(ratio "$a" "$g")" >>"$tmp/grpc"
done
ga=$(col 1 "$tmp/grpc") gb=$(col 2 "$tmp/grpc") gg=$(col 3 "$tmp/grpc") gacpu=$(col 4 "$tmp/grpc")
rgb=$(col 5 "$tmp/grpc") rgg=$(col 6 "$tmp/grpc")

# ---- row 4: open loop at 20 000/s ------------------------------------------------
echo "open loop: Server at target_qps=20000 against the NullServer, 3 runs of 3 s"
: >"$tmp/open"
for r in 1 2 3; do
	rm -rf "$tmp/run-open"
	"$tmp/aimeter" run -q --sut openai --url "$base" --stream=false --scenario Server --set target_qps=20000 --max-conns 512 \
		--set min_duration=3000 --set min_query_count=1 --input-tokens 8 --output-tokens 8 --request-timeout 10s \
		--output-dir "$tmp/run-open" >"$tmp/open.out" 2>&1 || true
	sl=$(sed -n 's/^  send lateness .* p99 \([^,]*\),.*/\1/p' "$tmp/open.out")
	# The records as CSV (a bundle holds records.parquet).
	if ! "$tmp/aimeter" export "$tmp/run-open" --format csv --output "$tmp/open-records.csv" 2>/dev/null ||
		[ ! -s "$tmp/open-records.csv" ]; then
		echo "run $r failed:" >&2
		tail -20 "$tmp/open.out" >&2
		echo "n/a n/a n/a n/a n/a" >>"$tmp/open"
		continue
	fi
	# issued − scheduled of every record, its p99 in µs and the count over 100 µs.
	read -r issued lp99 late < <(awk -F, 'NR > 1 {print $5 - $4}' "$tmp/open-records.csv" | sort -n |
		awk '{a[NR]=$1; if ($1 > 100000) l++} END {i=int(0.99*NR+0.5); if (i < 1) i=1; printf "%d %.1f %d\n", NR, a[i]/1e3, l+0}')
	first=$(grep -o '"first_seq": *[0-9]*' "$tmp/run-open/settings.json" | head -1 | grep -o '[0-9]*$')
	end=$(grep -o '"end_seq": *[0-9]*' "$tmp/run-open/settings.json" | head -1 | grep -o '[0-9]*$')
	unsent=$((end - first - issued))
	echo "run $r: client send lateness p99 $sl; issued − scheduled p99 ${lp99} µs; $issued issued, $late more than 100 µs late, $unsent scheduled but not issued"
	echo "$sl $lp99 $issued $late $unsent" >>"$tmp/open"
done

# ---- row 5: stream timestamp accuracy --------------------------------------------
echo "streams: one at a time against aimeter serve openai --tpot 1ms --send-log"
"$tmp/aimeter" serve openai --addr 127.0.0.1:0 --ttft 1ms --tpot 1ms --output-tokens 64 --send-log "$tmp/send.log" >"$tmp/sim.out" 2>&1 &
sim=$!
pids+=($sim)
surl=$(wait_for "$tmp/sim.out" 's|.*\(http://127\.0\.0\.1:[0-9]*\).*|\1|p')
rm -rf "$tmp/run-stream"
"$tmp/aimeter" run -q --sut openai --url "$surl" --scenario SingleStream --set min_duration=0 --set min_query_count=300 \
	--set target_latency=100 --input-tokens 16 --output-tokens 64 --output-dir "$tmp/run-stream" >"$tmp/stream.out" 2>&1 || true
kill "$sim" 2>/dev/null || true
wait "$sim" 2>/dev/null || true
join=$("$tmp/streamjoin" -bundle "$tmp/run-stream" -send-log "$tmp/send.log" 2>&1) || true
echo "$join"
sp50=$(echo "$join" | sed -n 's/.* p50_us \([^ ]*\) .*/\1/p')
sp99=$(echo "$join" | sed -n 's/.* p99_us \([^ ]*\) .*/\1/p')
sabs=$(echo "$join" | sed -n 's/.* abs_p99_us \([^ ]*\).*/\1/p')
stok=$(echo "$join" | sed -n 's/.* tokens \([0-9]*\) .*/\1/p')

# ---- row 6: concurrent streams and memory ----------------------------------------
echo "memory: $streams concurrent streams (100 tokens at 100 ms each)"
m_client=n/a m_server=n/a m_held=n/a
(
	ulimit -n "$(ulimit -Hn)"
	exec "$tmp/aimeter" serve openai --addr 127.0.0.1:0 --tpot 100ms --output-tokens 100
) >"$tmp/slow.out" 2>&1 &
slow=$!
pids+=($slow)
slurl=$(wait_for "$tmp/slow.out" 's|.*\(http://127\.0\.0\.1:[0-9]*\).*|\1|p')
rm -rf "$tmp/run-mem"
(
	ulimit -n "$(ulimit -Hn)"
	exec /usr/bin/time -o "$tmp/mem.time" -f "%M" "$tmp/aimeter" run -q --sut openai --url "$slurl" \
		--concurrency "$streams" --max-conns "$streams" --input-tokens 8 --output-tokens 100 --request-timeout 60s \
		--set min_duration=0 --set min_query_count="$streams" --set target_latency=0.001 --output-dir "$tmp/run-mem"
) >"$tmp/mem.out" 2>&1 || true
if [ -s "$tmp/mem.time" ]; then
	m_client=$(tail -1 "$tmp/mem.time")
	m_server=$(awk '/^VmHWM/ {print $2}' "/proc/$slow/status" 2>/dev/null || echo n/a)
	m_held=$(sed -n 's/^Completed samples per second : .*(\([0-9]*\) in flight).*/\1/p' "$tmp/mem.out")
fi
kill "$slow" 2>/dev/null || true
echo "client peak RSS $m_client KiB, server peak RSS $m_server KiB, $m_held in flight"
grep -E "requests|errors" "$tmp/mem.out" | head -3 || true
per() { awk -v k="$1" -v n="$streams" 'BEGIN {if (k+0 > 0) printf "%.1f", k/n; else print "n/a"}'; }

# ---- the table ---------------------------------------------------------------------
open_line() { awk -v r="$1" 'NR == r {printf "p99 send lateness %s; issued−scheduled p99 %s µs; %s issued, %s late > 100 µs, %s unsent", $1, $2, $3, $4, $5}' "$tmp/open"; }
cat <<EOF

## bench-net.sh: $rounds round(s); figures are medians, ratios medians of the per-round ratios; $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)

| figure | aimeter | baseline | ratio | target |
| --- | --- | --- | --- | --- |
| HTTP req/s, adapter vs bare net/http loop ($conns in flight) | $ha | $hb | $rab | ≥ 0.9 |
| HTTP req/s, adapter vs vegeta (max rate, $conns workers) | $ha | $hv | $rav | ≥ 1.3 |
| HTTP req/s, wrk (reference) | – | $hw | adapter/wrk $raw | – |
| streamed (16 events), req/s: adapter (h1 client) vs wrk; vs bare loop | $st_h | wrk $st_w; bare $st_b | $st_hw; $st_hb | ≥ 1.0; ≥ 1.1 |
| streamed, client CPU µs/request: adapter (h1, net of start-up) vs wrk; bare | $st_hc | wrk $st_wc; bare $st_bc | $st_hcw | ≤ 1.2 |
| streamed, adapter with net/http: req/s; CPU µs/request | $st_n; $st_nc | – | $st_nw (÷ wrk), $st_nb (÷ bare); CPU $st_ncw | – |
| client CPU µs/request, whole process (adapter; bare loop) | $hacpu | $hbcpu | $rcpu | ≤ 10 µs (MLPerf Endpoints ~47) |
| client CPU µs/request net of start-up ${http_startup}s (adapter; bare loop) | $hanet | $hbcpu | $rnet | ≤ 10 µs |
| gRPC req/s, adapter vs bare grpc-go ($gconc in flight) | $ga | $gb | $rgb | ≥ 0.9 |
| gRPC req/s, adapter vs ghz | $ga | $gg | $rgg | ≥ 2 |
| gRPC client CPU µs/request net of start-up ${grpc_startup}s (adapter) | $gacpu | – | – | – |
| open loop 20 000/s, run 1 | $(open_line 1) | | | p99 ≤ 100 µs |
| open loop 20 000/s, run 2 | $(open_line 2) | | | p99 ≤ 100 µs |
| open loop 20 000/s, run 3 | $(open_line 3) | | | p99 ≤ 100 µs |
| stream chunk time − server send time, µs ($stok chunks, TPOT 1 ms) | p50 $sp50, p99 $sp99, p99 of abs $sabs | | | p99 ≤ 100 µs |
| $streams concurrent streams: peak RSS KiB (per stream) | client $m_client ($(per "$m_client")) | server $m_server ($(per "$m_server")) | held $m_held | report |
EOF
