#!/usr/bin/env bash
# bench-server.sh: uploads/s, recomputed samples/s and the server's peak RSS
# of `aimeter server` against the number of concurrent `aimeter submit`s
# (issue 41, Performance). It builds aimeter, makes N bundles of the null
# SUT's Offline scenario (2.2 M samples each; kept in $WORK/bundles and
# reused across runs), and for each concurrency in $CONCURRENCY starts a
# fresh server on SQLite in a temp data dir, registers test items (one per
# 50 uploads, with retests for all of them), submits that many bundles at
# once and reads the server's VmHWM from /proc. Then one big bundle is
# submitted alone: an Offline run of --duration $BIG_DURATION, whose query
# is offline_expected_qps (the null SUT's 20 M/s) × the duration × 1.1
# samples: 1800ms gives 39.6 M samples (min_query_count does not scale an
# Offline run: 1000 and 20000 both give 2.2 M).
#
# Environment: WORK (default /tmp/aimeter-bench-server), N (50),
# CONCURRENCY ("1 4 16 50"), BIG_DURATION (1800ms; "" skips the big bundle),
# SERVER_FLAGS (extra flags of aimeter server, e.g. "--memory-budget 2GiB").
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-/tmp/aimeter-bench-server}
N=${N:-50}
CONCURRENCY=${CONCURRENCY-"1 4 16 50"}
BIG_DURATION=${BIG_DURATION-1800ms}
SERVER_FLAGS=${SERVER_FLAGS:-}
mkdir -p "$WORK/bundles"
AIMETER="$WORK/aimeter"
go build -o "$AIMETER" ./cmd/aimeter

for i in $(seq 1 "$N"); do
	d="$WORK/bundles/b$i"
	[ -f "$d/manifest.json" ] && continue
	"$AIMETER" run --sut null --scenario Offline --duration 100ms --set min_query_count=1000 --no-store -q --output-dir "$d" >/dev/null
done
BIG="$WORK/big-$BIG_DURATION"
if [ -n "$BIG_DURATION" ] && [ ! -f "$BIG/manifest.json" ]; then
	"$AIMETER" run --sut null --scenario Offline --duration "$BIG_DURATION" --set min_query_count=1000 --no-store -q --output-dir "$BIG" >/dev/null
fi
[ -f "$WORK/lab.key" ] || (cd "$WORK" && "$AIMETER" keygen --out lab >/dev/null)

samples_of() { # the issued samples of a bundle's result.json
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"]["issued"])' "$1/result.json"
}

SERVER_PID=
stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}
trap stop_server EXIT

# start_server: a fresh service on a free port; sets SERVER_PID, URL, DATA.
start_server() {
	DATA=$(mktemp -d "$WORK/data.XXXXXX")
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	URL="https://127.0.0.1:$port"
	# shellcheck disable=SC2086
	"$AIMETER" server --listen "127.0.0.1:$port" --data-dir "$DATA" $SERVER_FLAGS >"$DATA/server.out" 2>"$DATA/server.log" &
	SERVER_PID=$!
	for _ in $(seq 1 100); do
		grep -q "aimeter server on" "$DATA/server.out" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "the server did not start:" >&2
	cat "$DATA/server.log" >&2
	exit 1
}

# register ITEMS UPLOADS: ITEMS test items, each with retests for UPLOADS.
register() {
	local items=$1 uploads=$2
	for k in $(seq 1 "$items"); do
		"$AIMETER" server register --server "$URL" --ca "$DATA/tls/cert.pem" --token "$(cat "$DATA/admin.token")" \
			--party "bench $k" --public-key "$WORK/lab.pub" --retests "$((uploads - 1))" --out "$DATA/item$k.json" >"$DATA/item$k.out"
	done
}

token_of() { sed -n 's/^token: *//p' "$DATA/item$1.out"; }

peak_rss_mb() { awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$SERVER_PID/status"; }

stored_runs() { grep -c '"run stored"\|msg="run stored"' "$DATA/server.log" || true; }

# submit_all C DIR...: C submits at once, each of its own bundle.
submit_all() {
	local c=$1; shift
	local items=$(( (c + 49) / 50 ))
	register "$items" 50
	local start end pids=() k=0
	start=$(date +%s.%N)
	for d in "$@"; do
		local item=$(( k / 50 + 1 ))
		"$AIMETER" submit "$d" --config "$DATA/item$item.json" --token "$(token_of "$item")" --key "$WORK/lab.key" \
			>"$DATA/submit$k.out" 2>"$DATA/submit$k.err" &
		pids+=($!)
		k=$((k + 1))
	done
	local failed=0
	for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
	end=$(date +%s.%N)
	WALL=$(python3 -c "print(f'{$end - $start:.1f}')")
	FAILED=$failed
	RETRIES=$(cat "$DATA"/submit*.err | grep -c "retrying in" || true)
}

per_bundle=$(samples_of "$WORK/bundles/b1")
printf '%s\n' "server flags: ${SERVER_FLAGS:-(defaults)}; $per_bundle samples per bundle"
printf '%-12s %-8s %-7s %-8s %-10s %-12s %-9s %-8s\n' concurrency stored failed wall_s uploads/s samples/s peak_MB retries
for c in $CONCURRENCY; do
	start_server
	dirs=()
	for i in $(seq 1 "$c"); do dirs+=("$WORK/bundles/b$i"); done
	submit_all "$c" "${dirs[@]}"
	stored=$(stored_runs)
	peak=$(peak_rss_mb)
	python3 - "$c" "$stored" "$FAILED" "$WALL" "$per_bundle" "$peak" "$RETRIES" <<'PY'
import sys
c, stored, failed, wall, per, peak, retries = sys.argv[1:]
stored, wall, per = int(stored), float(wall), int(per)
print(f"{c:<12} {stored:<8} {failed:<7} {wall:<8.1f} {stored/wall:<10.2f} {stored*per/wall:<12.3g} {peak:<9} {retries:<8}")
PY
	stop_server
done

if [ -n "$BIG_DURATION" ]; then
	big=$(samples_of "$BIG")
	start_server
	register 1 1
	start=$(date +%s.%N)
	if "$AIMETER" submit "$BIG" --config "$DATA/item1.json" --token "$(token_of 1)" --key "$WORK/lab.key" >"$DATA/big.out" 2>"$DATA/big.err"; then
		outcome=stored
	else
		outcome="refused: $(grep -m1 -o 'HTTP [0-9]*): .*' "$DATA/big.err" | cut -c1-300)"
	fi
	end=$(date +%s.%N)
	echo "big bundle: $big samples, $(du -sh "$BIG" | cut -f1); $outcome; $(python3 -c "print(f'{$end - $start:.1f}')") s; server peak RSS $(peak_rss_mb) MB"
	stop_server
fi
