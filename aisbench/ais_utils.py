# ais_utils.py: aimeter's stand-in for the Ais-Benchmark-Stubs' ais_utils
# module. It is written for aimeter from the behaviour the public workload
# packages rely on (see docs/ais-bench.md); it is not the stubs' file.
#
# set_result(mode, key, value) appends one JSON line to the file named by
# the environment variable AIMETER_AIS_RESULTS, which aimeter reads when the
# package ends. Every line is written with one os.write under an exclusive
# lock, so that the ranks of a job may call it at once.
#
# Used as a program: python3 ais_utils.py set_result MODE KEY VALUE
import json
import math
import os
import sys
import time

_ENV = "AIMETER_AIS_RESULTS"


class _Stamp(float):
    """A time stamp: seconds since the epoch as the stubs 1.0 adapter returns
    them (time.time()), with decode() giving "%Y-%m-%d %H:%M:%S" as the
    stubs 2.0 library's bytes do (workloads call .decode('utf-8'))."""

    def decode(self, encoding="utf-8", errors="strict"):
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(self)))


def get_datatime():
    return _Stamp(time.time())


def calc_throughput_rate(nums, start_time, end_time):
    if start_time == end_time:
        return 0
    return nums / (end_time - start_time)


def calc_lantency(elapsedtime, count):
    return 0 if count == 0 else elapsedtime / count


def _value(v):
    """The value as JSON keeps it: numbers stay numbers (finite ones),
    bytes are decoded, anything else is its str()."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return float(v) if math.isfinite(v) else str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return str(v)


def set_result(mode, key, value, _extra=None):
    record = {
        "mode": str(mode),
        "key": str(key),
        "value": _value(value),
        "time": time.time(),
        "pid": os.getpid(),
    }
    if _extra:
        record["extra"] = [str(w) for w in _extra]
    rank = os.environ.get("RANK_ID")
    if rank is not None:
        record["rank"] = rank
    path = os.environ.get(_ENV)
    if not path:
        sys.stderr.write("ais_utils: %s is not set (not run by aimeter): result %s=%r not recorded\n" % (_ENV, key, value))
        return
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:
            pass
        os.write(fd, line)
    finally:
        os.close(fd)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "set_result":
        if len(sys.argv) < 5:
            sys.stderr.write("ais_utils: set_result needs MODE KEY VALUE, got %d arguments\n" % (len(sys.argv) - 2))
            # The value that arrived is recorded as missing, not dropped.
            args = sys.argv[2:] + [""] * (3 - len(sys.argv[2:]))
            set_result(args[0], args[1], args[2])
            sys.exit(0)
        # The value is the fourth word, as the stubs read it. Words after
        # it are what an unquoted value became (the shell splits
        # "2022-07-13 13:24:43" in two): they are kept apart, so that
        # aimeter can say what was lost.
        set_result(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        sys.stderr.write("ais_utils: unknown function %r\n" % (sys.argv[1:2],))
        sys.exit(1)
