"""Merges the ranks' result_rank_<N>.json and reports the job's figures:
throughput summed, the earliest start and the latest end of each time."""
import json
import os
import sys

import ais_utils

result_path, rank_size, run_mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
merged = {}
for rank in range(rank_size):
    path = os.path.join(result_path, "result_rank_%d.json" % rank)
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    with open(path) as f:
        data = json.load(f)
    for mode, keys in data.items():
        for key, values in keys.items():
            merged.setdefault(mode, {}).setdefault(key, []).extend(values)
for keys in merged.values():
    for values in keys.values():
        values.sort()

mode = {"only_pretrain": "train", "only_finetune": "finetune"}.get(run_mode)
if mode is None:
    raise RuntimeError("not supported run mode: %s" % run_mode)
for key, values in merged.get(mode, {}).items():
    if key == "throughput_ratio":
        ais_utils.set_result("training", key, sum(values))
    elif "start" in key:
        ais_utils.set_result("training", key, values[0])
    elif "end" in key:
        ais_utils.set_result("training", key, values[-1])
ais_utils.set_result("training", "result", "OK")
