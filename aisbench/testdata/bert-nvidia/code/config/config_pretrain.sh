#!/bin/bash
export PYTHON_COMMAND=python3
export BERT_CONFIG_DIR=${BASE_PATH}/data/bert_config
export TRAIN_DATA_PATH=${BASE_PATH}/data/pretrain.tfrecord
export TRAIN_STEPS=20
export CUDA_VISIBLE_DEVICES="0"
export BATCH_SIZE=8
export MAX_SEQ_LENGTH=512

# bmc info get power info from bmc
export BMC_IP=""
export BMC_USER="Administrator"
export BMC_PASSWORD=""
