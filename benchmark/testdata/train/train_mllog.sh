#!/bin/sh
# A two-rank MLPerf Training run as srun --label prints it: rank prefixes,
# evaluations with accuracy, power readings of both nodes, utilisation samples
# (aimeter_utilization), persistence, and one malformed record.
# Rank 1's records name node1 through the node metadata field.
cat <<'MLLOG'
0: launching 2 ranks
0: :::MLLOG {"namespace": "", "time_ms": 1700000000000, "event_type": "INTERVAL_START", "key": "init_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000000001, "event_type": "INTERVAL_START", "key": "init_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000000005, "event_type": "POINT_IN_TIME", "key": "submission_benchmark", "value": "resnet", "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000000010, "event_type": "POINT_IN_TIME", "key": "train_samples", "value": 1000, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000000020, "event_type": "POINT_IN_TIME", "key": "aimeter_data_read_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000000021, "event_type": "POINT_IN_TIME", "key": "aimeter_data_read_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000000300, "event_type": "POINT_IN_TIME", "key": "aimeter_data_read_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000000350, "event_type": "POINT_IN_TIME", "key": "aimeter_data_read_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000000400, "event_type": "INTERVAL_END", "key": "init_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000000401, "event_type": "INTERVAL_END", "key": "init_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000000500, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000000501, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000000510, "event_type": "POINT_IN_TIME", "key": "aimeter_accelerator_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "rank": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000000530, "event_type": "POINT_IN_TIME", "key": "aimeter_accelerator_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "rank": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001000, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001001, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001200, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 400.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node0", "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001201, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 380.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node1", "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001250, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001250, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001500, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 401.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node0", "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001501, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 381.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node1", "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001550, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8500000000000001, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001550, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8500000000000001, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001800, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 402.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node0", "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001801, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 382.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node1", "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000001850, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.9, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000001850, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.9, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000002000, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "samples_count": 500, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000002001, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "samples_count": 500, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000002010, "event_type": "INTERVAL_START", "key": "eval_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000002200, "event_type": "INTERVAL_END", "key": "eval_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000002201, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", "value": 0.52, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 0, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000003000, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 1, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000003001, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 1, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000003200, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 400.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node0", "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000003201, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 380.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node1", "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000003250, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000003250, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000003500, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 401.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node0", "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000003501, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 381.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node1", "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000003550, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8500000000000001, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000003550, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.8500000000000001, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000003800, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 402.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node0", "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000003801, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 382.0, "metadata": {"file": "train.py", "lineno": 1, "host": "node1", "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000003850, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.9, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000003850, "event_type": "POINT_IN_TIME", "key": "aimeter_utilization", "value": 0.9, "metadata": {"file": "train.py", "lineno": 1, "chip": 0, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000004000, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 1, "samples_count": 500, "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000004001, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 1, "samples_count": 500, "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000004010, "event_type": "INTERVAL_START", "key": "eval_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 1, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000004200, "event_type": "INTERVAL_END", "key": "eval_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 1, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000004201, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", "value": 0.77, "metadata": {"file": "train.py", "lineno": 1, "epoch_num": 1, "node": "node0"}}
1: this line has :::MLLOG {not json
0: :::MLLOG {"namespace": "", "time_ms": 1700000005000, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "status": "success", "node": "node0"}}
1: :::MLLOG {"namespace": "", "time_ms": 1700000005001, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "status": "success", "node": "node1"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000005010, "event_type": "POINT_IN_TIME", "key": "aimeter_persist_start", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
0: :::MLLOG {"namespace": "", "time_ms": 1700000005090, "event_type": "POINT_IN_TIME", "key": "aimeter_persist_stop", "value": null, "metadata": {"file": "train.py", "lineno": 1, "node": "node0"}}
MLLOG
echo "training done" >&2
