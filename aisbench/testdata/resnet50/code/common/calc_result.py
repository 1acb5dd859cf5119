"""Sums the per-rank throughput files, reads the accuracy, writes
result.log and reports both (as the public calc_result.py does)."""
import json
import os
import sys

result_path, rank_size = sys.argv[1], int(sys.argv[2])
total = 0.0
for rank in range(rank_size):
    path = os.path.join(result_path, "throughput_rank_%d" % rank)
    if not os.path.exists(path):
        print("%s file not exist" % path)
        continue
    with open(path) as f:
        value = float(f.read())
    print("%s file throughput: %s" % (path, value))
    total += value

accuracy = 0
acc_path = os.path.join(result_path, "eval_acc.log")
if os.path.exists(acc_path):
    with open(acc_path) as f:
        accuracy = float(f.read())
else:
    print("%s file not exist" % acc_path)

print("throughput_ratio:%s" % total)
print("accuracy:%s" % accuracy)
with open(os.path.join(result_path, "result.log"), "w") as f:
    json.dump({"throughput_ratio": total, "accuracy": accuracy}, f)

try:
    import ais_utils
    ais_utils.set_result("training", "throughput_ratio", total)
    ais_utils.set_result("training", "accuracy", float(accuracy))
    ais_utils.set_result("training", "result", "OK")
except ImportError:
    sys.exit()
