# A stand-in for MLPerf's tools/submission/log_parser.py, which the peers
# copy of mlcommons/inference does not include but TEST01's
# verify_performance.py imports. Written for aimeter's tests from the
# description in loadgen-reference.md section 13 (no code copied): it reads
# the ":::MLLOG {json}" lines of an mlperf_log_detail.txt, the first value
# of a key winning, and tells whether any entry is flagged as an error.
import json


class MLPerfLog:
    def __init__(self, path):
        self._values = {}
        self._error = False
        with open(path) as f:
            for line in f:
                if not line.startswith(":::MLLOG"):
                    continue
                entry = json.loads(line[len(":::MLLOG"):])
                self._values.setdefault(entry["key"], entry["value"])
                if entry.get("metadata", {}).get("is_error"):
                    self._error = True

    def __getitem__(self, key):
        return self._values[key]

    def get_keys(self):
        return self._values.keys()

    def has_error(self):
        return self._error
