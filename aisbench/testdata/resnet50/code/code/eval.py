"""Stands in for ResNet-50's eval.py: checks the checkpoint and the
evaluation set, prints the result as MindSpore does and writes the top-1
accuracy to $RESULT_PATH/eval_acc.log."""
import argparse
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--data_path")
parser.add_argument("--checkpoint_file_path")
args = parser.parse_args()

labels = os.path.join(args.data_path, "labels.txt")
if not os.path.exists(labels):
    print("ValueError: no labels.txt in the evaluation set %s" % args.data_path, file=sys.stderr)
    sys.exit(1)
result = {"top_1_accuracy": 0.7614, "top_5_accuracy": 0.9287}
print("result:", result, "ckpt=", args.checkpoint_file_path, flush=True)
with open(os.path.join(os.environ["RESULT_PATH"], "eval_acc.log"), "w") as f:
    f.write(str(result["top_1_accuracy"]))
