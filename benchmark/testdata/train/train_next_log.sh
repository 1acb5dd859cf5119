#!/bin/sh
# A training program for the trials tests: each run prints the next log of a
# directory (result_0.txt, result_1.txt, ...), counting runs in a file, as a
# program that trains once per run would print its MLLOG lines. A log whose
# name ends in .fail.txt makes the run exit 1 after printing it; .hang.txt
# makes it sleep until it is killed.
# Usage: train_next_log.sh DIR COUNTER
dir=$1 counter=$2
n=$(cat "$counter" 2>/dev/null || echo 0)
echo $((n + 1)) > "$counter"
for f in "$dir/result_$n.txt" "$dir/result_$n.fail.txt" "$dir/result_$n.hang.txt"; do
  [ -f "$f" ] || continue
  cat "$f"
  case $f in
    *.fail.txt) echo "trainer crashed" >&2; exit 1 ;;
    *.hang.txt) exec sleep 600 ;;
  esac
  exit 0
done
echo "no log for run $n in $dir" >&2
exit 2
