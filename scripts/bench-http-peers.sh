#!/usr/bin/env bash
# Side-by-side HTTP client throughput on loopback: wrk, netbench's bare
# net/http loop and vegeta, in interleaved rounds against one NullServer
# (netbench null), all on this machine. Prints each round and the median
# req/s of each client with ratios against the bare loop. Install the peers
# first with scripts/install-peers.sh. Client and server share the machine,
# so only ratios taken in one run mean anything.
#
# Usage: scripts/bench-http-peers.sh [rounds (3)] [seconds (5)] [connections (64)]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-5}
conns=${3:-64}
cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
wrk="$cache/bin/wrk"
vegeta="$cache/bin/vegeta"
for t in "$wrk" "$vegeta"; do
  [ -x "$t" ] || { echo "missing $t: run scripts/install-peers.sh" >&2; exit 1; }
done
export PATH="/usr/local/go/bin:$PATH"

tmp=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/netbench" ./internal/netbench/cmd/netbench

body='{"model":"null","messages":[{"role":"user","content":"hello"}],"max_tokens":8}'
printf '%s' "$body" > "$tmp/body.json"
# The server reads stdin until it closes: a fifo held open by this script.
mkfifo "$tmp/hold"
"$tmp/netbench" null < "$tmp/hold" > "$tmp/url" &
server_pid=$!
exec 9> "$tmp/hold"
for _ in $(seq 50); do [ -s "$tmp/url" ] && break; sleep 0.1; done
url="$(cat "$tmp/url")/v1/chat/completions"
echo "server $url, $rounds rounds of ${secs}s, $conns connections"

cat > "$tmp/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA
printf 'POST %s\nContent-Type: application/json\n@%s\n' "$url" "$tmp/body.json" > "$tmp/targets"

: > "$tmp/results"
for r in $(seq "$rounds"); do
  w=$("$wrk" -t2 -c"$conns" -d"${secs}s" -s "$tmp/post.lua" "$url" | awk '/^Requests\/sec/ {printf "%.0f", $2}')
  b=$("$tmp/netbench" bare -url "$url" -c "$conns" -d "${secs}s" -body "$body" | awk '{print $4}')
  v=$("$vegeta" attack -rate=0 -workers="$conns" -max-workers="$conns" -duration="${secs}s" -targets="$tmp/targets" |
    "$vegeta" report -type=json | sed -n 's/.*"throughput":\([0-9.]*\).*/\1/p' | awk '{printf "%.0f", $1}')
  awk -v r="$r" -v w="$w" -v b="$b" -v v="$v" 'BEGIN {
    printf "round %d: wrk %d  bare-net/http %d  vegeta %d req/s  (wrk/bare %.2f, bare/vegeta %.2f)\n", r, w, b, v, w/b, b/v }'
  echo "$w $b $v" >> "$tmp/results"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mw=$(awk '{print $1}' "$tmp/results" | median)
mb=$(awk '{print $2}' "$tmp/results" | median)
mv=$(awk '{print $3}' "$tmp/results" | median)
echo "median req/s: wrk $mw, bare net/http $mb, vegeta $mv"
awk -v w="$mw" -v b="$mb" -v v="$mv" 'BEGIN {printf "ratios: wrk/bare %.2f, bare/vegeta %.2f, wrk/vegeta %.2f\n", w/b, b/v, w/v}'
