#!/bin/sh
# bench-grpc.sh: requests/s of aimeter's KServe gRPC adapter against a bare
# grpc-go client loop and against ghz, all three sending the same request
# (one Fashion-MNIST-sized FP32 tensor as raw_input_contents) with 32
# requests in flight to the same `aimeter serve kserve` on loopback, in
# interleaved rounds. Client and server share the machine: read the ratios,
# not the absolute figures.
#
#   scripts/bench-grpc.sh [ROUNDS]        (default 3)
#
# ghz (github.com/bojand/ghz v0.120.0) is GHZ if set, else the one
# scripts/install-peers.sh puts in $AIMETER_CACHE/bin (default
# ~/.cache/aimeter/bin), else installed into a temporary GOBIN; without it,
# only the adapter and the bare loop are compared.
set -eu
rounds=${1:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
cleanup() {
	[ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
cd "$here"

go build -o "$tmp/aimeter" ./cmd/aimeter
go test -c -o "$tmp/kserve.test" ./sut/kserve
cached_ghz="${AIMETER_CACHE:-$HOME/.cache/aimeter}/bin/ghz"
if [ -z "${GHZ:-}" ] && [ -x "$cached_ghz" ]; then
	GHZ=$cached_ghz
fi
if [ -z "${GHZ:-}" ]; then
	if GOBIN="$tmp/bin" go install github.com/bojand/ghz/cmd/ghz@v0.120.0 2>"$tmp/ghz.log"; then
		GHZ="$tmp/bin/ghz"
	else
		echo "note: ghz could not be installed (see below); comparing with the bare loop only" >&2
		tail -3 "$tmp/ghz.log" >&2
		GHZ=
	fi
fi

"$tmp/aimeter" serve kserve --http '' --grpc 127.0.0.1:0 -q >"$tmp/serve.out" 2>&1 &
server=$!
addr=
i=0
while [ -z "$addr" ] && [ $i -lt 600 ]; do
	addr=$(sed -n 's/^KServe v2 gRPC: \([^ ]*\) .*/\1/p' "$tmp/serve.out")
	sleep 0.1
	i=$((i + 1))
done
[ -n "$addr" ] || { echo "aimeter serve kserve did not start:" >&2; cat "$tmp/serve.out" >&2; exit 1; }
echo "server: aimeter serve kserve at $addr"

# The ghz request: the same tensor the benchmark sends (zeros; the model's
# cost does not depend on the values).
payload=$(head -c 3136 /dev/zero | base64 -w0)
printf '{"model_name":"fashion-mlp","inputs":[{"name":"input","datatype":"FP32","shape":[1,784]}],"outputs":[{"name":"logits"}],"raw_input_contents":["%s"]}' "$payload" >"$tmp/req.json"

rate() { # ns/op -> requests/s
	awk -v ns="$1" 'BEGIN { printf "%.0f", 1e9 / ns }'
}
for r in $(seq "$rounds"); do
	out=$(AIMETER_BENCH_GRPC_ADDR=$addr "$tmp/kserve.test" -test.run '^$' -test.bench '^BenchmarkGRPC$' -test.benchtime 2s -test.benchmem)
	a=$(echo "$out" | awk '/GRPC\/adapter/ { print $3 }')
	b=$(echo "$out" | awk '/GRPC\/bare/ { print $3 }')
	aa=$(echo "$out" | awk '/GRPC\/adapter/ { print $7 }')
	ba=$(echo "$out" | awk '/GRPC\/bare/ { print $7 }')
	line="round $r: adapter $(rate "$a") req/s ($aa allocs/op), bare grpc-go $(rate "$b") req/s ($ba allocs/op), adapter/bare $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
	if [ -n "$GHZ" ]; then
		g=$("$GHZ" --insecure --proto sut/kserve/inferencepb/grpc_service.proto \
			--call inference.GRPCInferenceService/ModelInfer -D "$tmp/req.json" \
			-c 32 -z 2s -O json "$addr" | sed -n 's/.*"rps":\([0-9.]*\).*/\1/p')
		line="$line, ghz $(printf '%.0f' "$g") req/s, adapter/ghz $(awk -v a="$a" -v g="$g" 'BEGIN { printf "%.2f", 1e9 / a / g }')"
	fi
	echo "$line"
done
