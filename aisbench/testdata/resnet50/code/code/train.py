"""Stands in for MindSpore's ResNet-50 train.py as the ais-bench patch
leaves it: trains nothing, logs epochs and steps the way the real one does,
saves a checkpoint, and writes this rank's throughput (samples/s over the
wall time of model.train) to $RESULT_PATH/throughput_rank_<RANK_ID>."""
import argparse
import os
import time

parser = argparse.ArgumentParser()
parser.add_argument("--data_path")
parser.add_argument("--epoch_size", type=int, default=1)
parser.add_argument("--device_num", type=int, default=1)
parser.add_argument("--output_path", default=".")
args = parser.parse_args()

batch_size, steps = 32, 10
rank = os.environ.get("RANK_ID", "0")
start = time.time()
for epoch in range(1, args.epoch_size + 1):
    for step in range(1, steps + 1):
        time.sleep(0.01)
        if step % 5 == 0:
            print("epoch: %d step: %d, loss is %.4f" % (epoch, step, 6.9 / (epoch + step / 10.0)), flush=True)
    print("epoch time: %.3f ms, per step time: %.3f ms" % (100.0, 10.0), flush=True)
end = time.time()
with open(os.path.join(args.output_path, "resnet-%d_%d.ckpt" % (args.epoch_size, steps)), "w") as f:
    f.write("not a checkpoint\n")
throughput = steps * batch_size * args.epoch_size / (end - start)
print("rank %s throughput: %s" % (rank, throughput), flush=True)
with open(os.path.join(os.environ["RESULT_PATH"], "throughput_rank_%s" % rank), "w") as f:
    f.write(str(throughput))
