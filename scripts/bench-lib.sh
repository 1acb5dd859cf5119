# bench-lib.sh: helpers shared by the benchmark scripts (sourced, not run,
# from the repository's root).

# bench_scratch: a scratch directory $tmp and an array pids of processes to
# kill, both cleaned up when the script exits or is interrupted.
bench_scratch() {
	tmp=$(mktemp -d)
	pids=()
	trap bench_cleanup EXIT INT TERM
}

bench_cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}

# median: the median of the numbers on standard input, one a line ("n/a"
# for none).
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "n/a"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# ratio A B: A/B with two decimals, "n/a" unless both are positive.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a+0 > 0 && b+0 > 0) printf "%.2f", a/b; else print "n/a"}'; }

# wait_for FILE SED_EXPR: the first match of SED_EXPR in FILE, waiting up to
# 60 s; exits the script with FILE's content when nothing matches.
wait_for() {
	local v="" i=0
	while [ -z "$v" ] && [ $i -lt 600 ]; do
		v=$(sed -n "$2" "$1" 2>/dev/null | head -1)
		[ -n "$v" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$v" ] || { echo "no match for $2 in $1:" >&2; cat "$1" >&2; exit 1; }
	echo "$v"
}

# start_null_server: starts netbench's NullServer (built into $tmp) on loopback, kept alive by
# a FIFO held open on descriptor 9 (it exits when the script does), and sets
# base (its URL) and null_pid; refuses any address but 127.0.0.1.
start_null_server() {
	mkfifo "$tmp/hold"
	"$tmp/netbench" null <"$tmp/hold" >"$tmp/null.url" &
	null_pid=$!
	pids+=("$null_pid")
	exec 9>"$tmp/hold"
	base=$(wait_for "$tmp/null.url" 's/^\(http:.*\)/\1/p')
	case $base in http://127.0.0.1:*) ;; *) echo "the NullServer is not on 127.0.0.1: $base" >&2; exit 1 ;; esac
}

# cpu_us FILE REQUESTS: user+sys seconds in FILE (from /usr/bin/time -f "%U %S"), in µs per request.
# (/usr/bin/time writes "Command exited with non-zero status N" first when
# the run is INVALID: only the figures' line counts.)
cpu_us() { awk -v n="$2" '/^[0-9.]+ [0-9.]+$/ {c=$1+$2} END {if (n+0 > 0) printf "%.1f", c*1e6/n; else print "n/a"}' "$1"; }

# startup_cpu NAME ARGS...: user+sys seconds of a run of 10 requests, one
# at a time (start-up, the check, writing a bundle): subtracted from the
# rounds' CPU to give the CPU per request net of the fixed costs.
startup_cpu() {
	local name=$1
	shift
	rm -rf "$tmp/run-$name-startup"
	/usr/bin/time -o "$tmp/$name.startup" -f "%U %S" "$tmp/aimeter" run -q "$@" --concurrency 1 \
		--set min_duration=0 --set min_query_count=10 --set target_latency=1 \
		--output-dir "$tmp/run-$name-startup" >/dev/null 2>&1 || true
	awk '/^[0-9.]+ [0-9.]+$/ {c=$1+$2} END {printf "%.3f", c}' "$tmp/$name.startup"
}
# net_cpu_us FILE STARTUP_S REQUESTS: (CPU in FILE − STARTUP_S) per request, µs.
net_cpu_us() { awk -v s="$2" -v n="$3" '/^[0-9.]+ [0-9.]+$/ {c=$1+$2-s} END {if (n+0 > 0) printf "%.1f", c*1e6/n; else print "n/a"}' "$1"; }

# proc_ticks PID: user+system CPU of process PID so far, in clock ticks.
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# server_us TICKS0 TICKS1 REQUESTS: the server's CPU between two proc_ticks
# readings, in µs per request ("n/a" without requests).
server_us() {
	awk -v a="$1" -v b="$2" -v n="$3" -v hz="$(getconf CLK_TCK)" \
		'BEGIN {if (n + 0 > 0) printf "%.1f", (b - a) * 1e6 / hz / n; else print "n/a"}'
}

# stream_rounds ROUNDS SECS CONNS URL BODY STARTUP_S [LABEL:ARGS]...: the
# streaming comparison of issue 27 against a NullServer streaming
# NullStreamEvents events per answer (URL is its /v1/chat/completions, BODY
# asks for a stream), in ROUNDS interleaved rounds of SECS seconds with
# CONNS requests in flight: wrk (-t2), netbench's bare net/http loop, and
# `aimeter run --sut openai --concurrency CONNS` once per LABEL:ARGS (ARGS
# added to its command line, split on spaces; ARGS of the form ENV@ARGS
# also set the environment variables ENV, such as GOMAXPROCS=1, and
# AIMETER_BIN=PATH runs that aimeter binary, another commit's build). Each client's user+sys CPU
# comes from /usr/bin/time; the adapter's is also given net of STARTUP_S
# (its fixed costs). Appends "client req/s cpu_us" lines per round to
# $tmp/stream (the adapter's cpu_us net of start-up) and prints each round;
# appends "client server_us" lines to $tmp/stream-server: the NullServer's
# own CPU per request while that client ran (process $null_pid), since
# client and server share the cores and the server's share bounds every
# client's rate. Needs $tmp/netbench, $tmp/aimeter and $wrk (skipped when
# absent).
stream_rounds() {
	local rounds=$1 secs=$2 conns=$3 url=$4 body=$5 startup=$6
	shift 6
	printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' "'$body'" >"$tmp/stream.lua"
	: >"$tmp/stream"
	: >"$tmp/stream-server"
	local r line n v spec label args envs bin s0
	for r in $(seq "$rounds"); do
		line="round $r:"
		if [ -x "${wrk:-}" ]; then
			s0=$(proc_ticks "$null_pid")
			/usr/bin/time -o "$tmp/swrk.cpu" -f "%U %S" "$wrk" -t2 -c"$conns" -d"${secs}s" -s "$tmp/stream.lua" "$url" >"$tmp/swrk.out"
			v=$(awk '/^Requests\/sec/ {printf "%.0f", $2}' "$tmp/swrk.out")
			n=$(awk '/ requests in / {print $1}' "$tmp/swrk.out")
			echo "wrk $v $(cpu_us "$tmp/swrk.cpu" "$n")" >>"$tmp/stream"
			echo "wrk $(server_us "$s0" "$(proc_ticks "$null_pid")" "$n")" >>"$tmp/stream-server"
			line="$line wrk $v req/s $(cpu_us "$tmp/swrk.cpu" "$n") µs;"
		fi
		s0=$(proc_ticks "$null_pid")
		/usr/bin/time -o "$tmp/sbare.cpu" -f "%U %S" "$tmp/netbench" bare -url "$url" -c "$conns" -d "${secs}s" -body "$body" >"$tmp/sbare.out"
		v=$(awk '{printf "%.0f", $4}' "$tmp/sbare.out")
		n=$(awk '{print $1}' "$tmp/sbare.out")
		echo "bare $v $(cpu_us "$tmp/sbare.cpu" "$n")" >>"$tmp/stream"
		echo "bare $(server_us "$s0" "$(proc_ticks "$null_pid")" "$n")" >>"$tmp/stream-server"
		line="$line bare $v req/s $(cpu_us "$tmp/sbare.cpu" "$n") µs;"
		for spec in "$@"; do
			label=${spec%%:*} args=${spec#*:} envs=
			case $args in *@*) envs=${args%%@*} args=${args#*@} ;; esac
			bin=$tmp/aimeter
			case " $envs " in *" AIMETER_BIN="*) bin=${envs##*AIMETER_BIN=} bin=${bin%% *} ;; esac
			rm -rf "$tmp/run-stream-$label"
			# shellcheck disable=SC2086 # ENV and ARGS are split on purpose
			s0=$(proc_ticks "$null_pid")
			env $envs /usr/bin/time -o "$tmp/sada.cpu" -f "%U %S" "$bin" run -q --sut openai --url "${url%/v1/chat/completions}" \
				--concurrency "$conns" --max-conns "$conns" --input-tokens 8 --output-tokens 14 --request-timeout 10s \
				--set min_duration=$((secs * 1000)) --set min_query_count=1 --set target_latency=0.01 $args \
				--output-dir "$tmp/run-stream-$label" >"$tmp/sada.out" 2>&1 || true
			v=$(sed -n 's/^Completed samples per second : \([0-9.]*\).*/\1/p' "$tmp/sada.out" | awk '{printf "%.0f", $1}')
			n=$(sed -n 's/^  requests \([0-9]*\), errors \([0-9]*\).*/\1 \2/p' "$tmp/sada.out")
			[ -n "$v" ] || { echo "the adapter run $label failed:" >&2; tail -20 "$tmp/sada.out" >&2; v=n/a; }
			echo "$label $v $(net_cpu_us "$tmp/sada.cpu" "$startup" "${n%% *}") $(cpu_us "$tmp/sada.cpu" "${n%% *}")" >>"$tmp/stream"
			echo "$label $(server_us "$s0" "$(proc_ticks "$null_pid")" "${n%% *}")" >>"$tmp/stream-server"
			line="$line $label $v req/s $(net_cpu_us "$tmp/sada.cpu" "$startup" "${n%% *}") µs net ($(cpu_us "$tmp/sada.cpu" "${n%% *}") whole; requests/errors ${n:-n/a});"
		done
		echo "$line"
	done
}

# stream_server_median CLIENT: the median over rounds of the NullServer's
# CPU µs per request while CLIENT ran (from $tmp/stream-server).
stream_server_median() { awk -v c="$1" '$1 == c && $2 != "n/a" {print $2}' "$tmp/stream-server" | median; }

# stream_median CLIENT FIELD: the median of field FIELD (2 req/s, 3 CPU
# µs/request) of CLIENT's lines in $tmp/stream.
stream_median() { awk -v c="$1" -v f="$2" '$1 == c && $f != "n/a" {print $f}' "$tmp/stream" | median; }

# stream_ratio CLIENT FIELD BASE: the median over rounds of CLIENT's FIELD
# divided by BASE's in the same round.
stream_ratio() {
	awk -v c="$1" -v f="$2" -v b="$3" '$1 == b {r++; base[r] = $f} $1 == c {k++; v[k] = $f}
		END {for (i = 1; i <= k; i++) if (v[i] + 0 > 0 && base[i] + 0 > 0) printf "%.3f\n", v[i] / base[i]}' "$tmp/stream" | median
}
