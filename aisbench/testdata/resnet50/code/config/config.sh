export PYTHON_COMMAND=python3

export TRAIN_DATA_PATH=${BASE_PATH}/data/train
export EVAL_DATA_PATH=${BASE_PATH}/data/val
export EPOCH_SIZE=2

export RANK_SIZE=2
export DEVICE_NUM=2

# need if rank_size > 1
export RANK_TABLE_FILE=

# cluster need for node info
#export NODEINFO_FILE=/home/lab/ssh_nodes.json
