#!/usr/bin/env bash
# bench-merge.sh: the time and peak memory of `aimeter merge` against the
# number of records, for issue 43's "merging 4 × 10 M records in time
# linear in the records" check.
#
#   scripts/bench-merge.sh [N ...]        (default: 1000000 4000000)
#
# For each N it writes the 4 shards of an Offline test of 4 × N samples
# (synthetic bundles written by the library: the merge package's
# TestWriteBenchShards, records with latencies spread from 1 ms to 1 s),
# merges them with `aimeter merge` under /usr/bin/time, and prints a
# markdown table: wall time, CPU time (user + system: on a shared machine
# the steadier figure), records per CPU second, peak RSS, and RSS per
# record. The shards take about 4 bytes a record on disk, the merged bundle
# as much again; each size's files are removed before the next.
#
# Environment: WORK (a scratch directory; default a new temporary one,
# removed at the end), OLD (another aimeter binary, e.g. one built from an
# earlier commit, measured on the same shards after this tree's), SCENARIO
# (Offline, the default, or Server: 4 × N queries of one sample, split
# query mod 4, one scheduled every 250 µs; or Network: Server's, as a
# network SUT's, each record with request and response bytes and 8 token
# times, so samples.parquet and tokens.parquet).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${WORK:-$(mktemp -d)}
[[ -z ${WORK:-} ]] && trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
go build -o "$work/aimeter" ./cmd/aimeter
sizes=("$@")
[[ ${#sizes[@]} -eq 0 ]] && sizes=(1000000 4000000)
echo "| binary | records/shard | records | wall s | CPU s | records/CPU s | peak RSS MiB | RSS B/record |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for n in "${sizes[@]}"; do
	dir=$work/n$n
	rm -rf "$dir"
	AIMETER_MERGE_BENCH_DIR=$dir AIMETER_MERGE_RECORDS=$n AIMETER_MERGE_SCENARIO=${SCENARIO:-Offline} go test ./merge/ -run '^TestWriteBenchShards$' -count=1 >/dev/null
	bins=("this:$work/aimeter")
	[[ -n ${OLD:-} ]] && bins+=("old:$OLD")
	for nb in "${bins[@]}"; do
		name=${nb%%:*} bin=${nb#*:}
		rm -rf "$dir/merged"
		rc=0
		/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin" merge "$dir"/shard-* --output-dir "$dir/merged" >/dev/null 2>"$work/merge.err" || rc=$?
		# 0 VALID, 3 INVALID (the synthetic test's verdict): both merged.
		if [[ $rc -ne 0 && $rc -ne 3 ]]; then
			cat "$work/merge.err" >&2; echo "aimeter merge ($name, N=$n) failed: exit $rc" >&2
			exit 1
		fi
		# The last line: GNU time puts "Command exited with non-zero
		# status 3" before the figures of an INVALID verdict.
		read -r wall user sys rss < <(tail -n 1 "$work/time")
		awk -v name="$name" -v n="$n" -v wall="$wall" -v user="$user" -v sys="$sys" -v rss="$rss" 'BEGIN {
			r = 4 * n
			t = user + sys
			printf "| %s | %d | %d | %.2f | %.2f | %.0f | %.0f | %.1f |\n", name, n, r, wall, t, r / t, rss / 1024, rss * 1024 / r
		}'
	done
	rm -rf "$dir"
done
