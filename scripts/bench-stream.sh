#!/usr/bin/env bash
# bench-stream.sh: issue 27's streaming client comparison in one command:
# wrk, netbench's bare net/http loop and aimeter's openai adapter against
# one NullServer that streams 16 server-sent events per answer (14 tokens,
# the usage, [DONE], each flushed on its own), CONNS requests in flight,
# interleaved rounds, client and server on this machine. Prints each round,
# then the medians of req/s and client CPU µs per request (user+sys of the
# client process over its completed requests; aimeter's net of its
# start-up), the medians of the per-round ratios, and the NullServer's own
# CPU per request during each client's runs: on shared cores the server's
# cost bounds every client's rate, so a client can be ahead of another in
# requests/s only by as much as it saves of the two processes' CPU together.
#
#   scripts/bench-stream.sh [ROUNDS]        (default 3)
#
# Environment: SECS (seconds per run, default 5), CONNS (default 64),
# ADAPTERS (space-separated LABEL:ARGS, the aimeter runs of each round;
# ARGS use commas for spaces, ENV@ARGS sets environment variables too, as
# in "g1:GOMAXPROCS=1@--http-client,h1"; default "h1:--http-client,h1
# nethttp:--http-client,net/http", the adapter with each HTTP client), AIMETER_CACHE (where
# scripts/install-peers.sh put wrk). Only the ratios of one run mean
# anything: client and server share the machine.
set -euo pipefail
rounds=${1:-3}
secs=${SECS:-5}
conns=${CONNS:-64}
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
wrk="$cache/bin/wrk"
[ -x /usr/bin/time ] || { echo "bench-stream.sh needs /usr/bin/time (GNU time)" >&2; exit 1; }
. scripts/bench-lib.sh
bench_scratch
[ -x "$wrk" ] || echo "skip wrk: $wrk not installed (scripts/install-peers.sh wrk)"
go build -o "$tmp/aimeter" ./cmd/aimeter
go build -o "$tmp/netbench" ./internal/netbench/cmd/netbench
start_null_server
url="$base/v1/chat/completions"
body='{"model":"null","stream":true,"messages":[{"role":"user","content":"hello"}],"max_tokens":14}'
specs=()
for a in ${ADAPTERS:-h1:--http-client,h1 nethttp:--http-client,net/http}; do specs+=("${a//,/ }"); done
startup=$(startup_cpu stream --sut openai --url "$base" --input-tokens 8 --output-tokens 14)
echo "streams: NullServer $url, $rounds rounds of ${secs}s, $conns in flight; adapter start-up CPU ${startup}s"
stream_rounds "$rounds" "$secs" "$conns" "$url" "$body" "$startup" "${specs[@]}"
echo
echo "| client | req/s | CPU µs/request | req/s ÷ wrk | CPU ÷ wrk | req/s ÷ bare | CPU ÷ bare | server CPU µs/request |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for c in wrk bare $(for s in "${specs[@]}"; do echo "${s%%:*}"; done); do
	echo "| $c | $(stream_median "$c" 2) | $(stream_median "$c" 3) | $(stream_ratio "$c" 2 wrk) | $(stream_ratio "$c" 3 wrk) | $(stream_ratio "$c" 2 bare) | $(stream_ratio "$c" 3 bare) | $(stream_server_median "$c") |"
done
