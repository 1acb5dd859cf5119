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
