#!/bin/sh
# A training program that starts, runs one epoch and then fails with status 3.
cat <<'MLLOG'
0: :::MLLOG {"namespace": "", "time_ms": 1700000000500, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000000501, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001000, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001001, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000002000, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "samples_count": 500, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000002001, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "samples_count": 500, "node": "node1"}}
MLLOG
echo 'CUDA error: out of memory' >&2
exit 3
