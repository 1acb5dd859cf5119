#!/bin/sh
# demo-stability.sh: run `aimeter demo` several times and tally how often
# each scenario is VALID, with the Server throughput, the peak memory and
# the bytes written by each run. A benchmark for people, not a CI test: its
# figures depend on the machine and on whatever else runs on it.
#
# Usage: scripts/demo-stability.sh [-n RUNS] [--neighbour] [--binary PATH] [--keep DIR] [-- DEMO FLAGS...]
#   -n RUNS       number of demo runs (default 10)
#   --neighbour   keep one busy loop (sh -c 'while :; do :; done') running
#                 during each run: a neighbour process taking one core
#   --binary PATH aimeter binary to run (default: go build ./cmd/aimeter)
#   --keep DIR    keep each run's output under DIR/run-N (default: a
#                 temporary directory, removed at the end)
#   -- FLAGS      passed to aimeter demo (e.g. --duration 2s)
#
# Needs GNU time (/usr/bin/time -v) for the peak memory.
# Exit status: 0 when every run was VALID in every scenario, 1 otherwise.
set -eu

runs=10
neighbour=0
binary=
keep=
while [ $# -gt 0 ]; do
	case $1 in
	-n) runs=$2; shift 2 ;;
	--neighbour | --neighbor) neighbour=1; shift ;;
	--binary) binary=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo-stability.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
case $runs in '' | *[!0-9]* | 0) echo "demo-stability.sh: -n wants a positive number, not '$runs'" >&2; exit 2 ;; esac
if [ ! -x /usr/bin/time ]; then
	echo "demo-stability.sh: /usr/bin/time (GNU time) is needed for the peak memory: apt-get install time" >&2
	exit 2
fi

if [ -n "$keep" ]; then
	mkdir -p "$keep"
	keep=$(cd "$keep" && pwd)
fi
tmp=$(mktemp -d)
nb=
cleanup() {
	if [ -n "$nb" ]; then kill "$nb" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
if [ -z "$binary" ]; then
	cd "$(dirname "$0")/.."
	go build -o "$tmp/aimeter" ./cmd/aimeter
	binary=$tmp/aimeter
fi
base=${keep:-$tmp}
mkdir -p "$base"

echo "aimeter demo x $runs on $(nproc) cores, neighbour: $([ $neighbour = 1 ] && echo 'one busy loop' || echo none), flags: ${*:-none}"
printf '%-4s %-5s %-7s %-7s %-7s %-7s %-8s %10s %8s %8s %s\n' run exit Acc SS MS Server Offline "Server/s" "RSS MB" "disk MB" "others' cores during Server"
all=0 ok=0 sv_min= sv_max= rss_max=0 disk_max=0
inv_ss=0 inv_ms=0 inv_sv=0 inv_off=0
i=1
while [ "$i" -le "$runs" ]; do
	dir=$base/run-$i
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ $neighbour = 1 ]; then
		sh -c 'while :; do :; done' &
		nb=$!
	fi
	set +e
	/usr/bin/time -v "$binary" demo -q --output-dir "$dir/out" "$@" >"$dir/stdout" 2>"$dir/stderr"
	code=$?
	set -e
	if [ -n "$nb" ]; then
		kill "$nb" 2>/dev/null || true
		wait "$nb" 2>/dev/null || true
		nb=
	fi
	# The verdict is the field VALID or INVALID of a scenario's row; the
	# metric's value is the field before it.
	verdict() { awk -v s="$1" '$1 == s { for (k = 2; k <= NF; k++) if ($k == "VALID" || $k == "INVALID") { print $k; exit } }' "$dir/stdout"; }
	acc=$(awk '$1 == "Accuracy" { print ($0 ~ /PASS/) ? "PASS" : "FAIL"; exit }' "$dir/stdout")
	ss=$(verdict SingleStream) ms=$(verdict MultiStream) sv=$(verdict Server) off=$(verdict Offline)
	svq=$(awk '$1 == "Server" { for (k = 2; k <= NF; k++) if ($k == "VALID" || $k == "INVALID") { print $(k-1); exit } }' "$dir/stdout")
	rss=$(awk -F: '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$dir/stderr")
	disk=$(du -sk "$dir/out" 2>/dev/null | awk '{ printf "%.1f", $1 / 1024 }')
	others=$(tr -d ' \n' <"$dir/out/server/run.json" 2>/dev/null |
		sed -n 's/.*"host_load":{"cpus":\([0-9]*\),"wall_s":\([0-9.e+-]*\),"self_cpu_s":[0-9.e+-]*,"other_cpu_s":\([0-9.e+-]*\),"steal_s":\([0-9.e+-]*\)}.*/\1 \2 \3 \4/p' |
		awk '{ if ($2 > 0) printf "%.2f of %d (steal %.2f)", $3 / $2, $1, $4 / $2 }')
	printf '%-4s %-5s %-7s %-7s %-7s %-7s %-8s %10s %8s %8s %s\n' "$i" "$code" "${acc:-?}" "${ss:-?}" "${ms:-?}" "${sv:-?}" "${off:-?}" "${svq:-?}" "${rss:-?}" "${disk:-?}" "${others:-?}"
	grep -h '^warning:' "$dir/stderr" | sed 's/^/     /' || true
	all=$((all + 1))
	if [ "$code" = 0 ] && [ "$ss$ms$sv$off" = VALIDVALIDVALIDVALID ] && [ "$acc" = PASS ]; then ok=$((ok + 1)); fi
	[ "$ss" = VALID ] || inv_ss=$((inv_ss + 1))
	[ "$ms" = VALID ] || inv_ms=$((inv_ms + 1))
	[ "$sv" = VALID ] || inv_sv=$((inv_sv + 1))
	[ "$off" = VALID ] || inv_off=$((inv_off + 1))
	if [ -n "$svq" ]; then
		sv_min=$(awk -v a="${sv_min:-$svq}" -v b="$svq" 'BEGIN { print (b < a) ? b : a }')
		sv_max=$(awk -v a="${sv_max:-$svq}" -v b="$svq" 'BEGIN { print (b > a) ? b : a }')
	fi
	rss_max=$(awk -v a="$rss_max" -v b="${rss:-0}" 'BEGIN { print (b > a) ? b : a }')
	disk_max=$(awk -v a="$disk_max" -v b="${disk:-0}" 'BEGIN { print (b > a) ? b : a }')
	i=$((i + 1))
done
echo "VALID in every scenario: $ok of $all runs (not VALID: SingleStream $inv_ss, MultiStream $inv_ms, Server $inv_sv, Offline $inv_off)"
echo "Server throughput ${sv_min:-?}-${sv_max:-?} samples/s; peak RSS up to $rss_max MB; written up to $disk_max MB per run"
[ "$ok" = "$all" ]
