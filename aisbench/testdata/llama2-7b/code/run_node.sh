#!/bin/bash
. $WORK_PATH/common/log_util.sh

case "$1" in
train)
    pids=()
    for ((i=0; i<DEVICE_NUM; i++)); do
        RANK_ID=$i DEVICE_ID=$i $PYTHON_COMMAND -u $WORK_PATH/mindformers/run_mindformer.py \
            --train_dataset_dir $PRETRAIN_DATA_PATH --run_mode train > $WORK_PATH/rank_$i.log 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait $p || { logger_Warn "a rank failed"; exit 1; }; done
    ;;
eval)
    RANK_ID=0 $PYTHON_COMMAND -u $WORK_PATH/mindformers/run_mindformer.py --run_mode eval
    ;;
*)
    exit 1 ;;
esac
