"""Stands in for mindformers' run_mindformer.py as the ais-bench patch
leaves it: trains nothing; each rank stamps its phases with
ais_utils.get_datatime().decode('utf-8') into
$RESULT_PATH/result_rank_<RANK_ID>.json, and the evaluation sets the
accuracy as "loss: …, Perplexity: …"."""
import argparse
import json
import math
import os
import time

import ais_utils

parser = argparse.ArgumentParser()
parser.add_argument("--train_dataset_dir")
parser.add_argument("--run_mode", default="train")
args = parser.parse_args()


def save_aisbench_result(key, value):
    rank = os.getenv("RANK_ID", "0")
    mode = os.getenv("LLAMA_CUR_RUN_MODE", "train")
    path = os.path.join(os.environ["RESULT_PATH"], "result_rank_%s.json" % rank)
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data.setdefault(mode, {}).setdefault(key, []).append(value)
    with open(path, "w") as f:
        json.dump(data, f)


def stamp():
    return ais_utils.get_datatime().decode("utf-8")


if args.run_mode == "eval":
    avg_loss = 2.3125
    print("Average Loss and PPL Metric:", {"loss": avg_loss, "PPL": math.exp(avg_loss)}, flush=True)
    ais_utils.set_result("training", "accuracy", "loss: {}, Perplexity: {}".format(avg_loss, math.exp(avg_loss)))
else:
    save_aisbench_result("dataload_start_time", stamp())
    time.sleep(0.1)
    save_aisbench_result("dataload_end_time", stamp())
    save_aisbench_result("train_launch_start_time", stamp())
    time.sleep(0.1)
    save_aisbench_result("train_launch_end_time", stamp())
    save_aisbench_result("train_start_time", stamp())
    seq_len, batch, steps = 4096, 4, 5
    start = time.time()
    for step in range(1, steps + 1):
        time.sleep(0.2)
        print("{ Epoch:[  1/  1], step:[ %d/ %d], loss: %.3f, per_step_time: 200ms }" % (step, steps, 3.0 - step * 0.1), flush=True)
    elapsed = time.time() - start
    save_aisbench_result("train_end_time", stamp())
    save_aisbench_result("throughput_ratio", seq_len * batch * steps / elapsed)
    save_aisbench_result("model_persistence_start_time", stamp())
    time.sleep(0.05)
    save_aisbench_result("model_persistence_end_time", stamp())
