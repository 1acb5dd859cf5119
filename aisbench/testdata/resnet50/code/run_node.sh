#!/bin/bash
# Runs on each node: check, train (one process per device) or eval.
. $WORK_PATH/common/common.sh
. $WORK_PATH/common/log_util.sh

node_train()
{
    : "${SERVER_ID:=0}"
    RANK_START=$((SERVER_ID * DEVICE_NUM))
    failed=$(mktemp)
    for ((i=0; i<DEVICE_NUM; i++)); do
    {
        export DEVICE_ID=$i
        export RANK_ID=$((i + RANK_START))
        RUN_PATH=$WORK_PATH/train_parallel$RANK_ID
        mkdir -p $RUN_PATH; cd $RUN_PATH
        logger_Info "start training for SERVER_ID:$SERVER_ID rank $RANK_ID, device $DEVICE_ID"
        $PYTHON_COMMAND -u $WORK_PATH/code/train.py --data_path=$TRAIN_DATA_PATH --epoch_size=$EPOCH_SIZE \
            --device_num=$DEVICE_NUM --output_path=$RUN_PATH > $RUN_PATH/train.log 2>&1 || echo "rank $RANK_ID failed" >> $failed
    } &
    done
    wait
    [ -s $failed ] && { cat $failed; rm -f $failed; return 1; }
    rm -f $failed
    logger_Info "SERVER_ID:${SERVER_ID} training finished"
}

node_eval()
{
    export RANK_SIZE=1 DEVICE_ID=0 RANK_ID=${SINGLE_CARD_INDEX:-0}
    CHECKPOINT_PATH=$(ls -t $WORK_PATH/train_parallel$RANK_ID/*.ckpt 2>/dev/null | head -n 1)
    [ -f "$CHECKPOINT_PATH" ] || { logger_Warn "no checkpoint in train_parallel$RANK_ID"; return 1; }
    cp $CHECKPOINT_PATH $RESULT_PATH/
    $PYTHON_COMMAND -u $WORK_PATH/code/eval.py --data_path=$EVAL_DATA_PATH --checkpoint_file_path=$CHECKPOINT_PATH
}

node_check()
{
    source $1
    check_path_valid "$TRAIN_DATA_PATH" || { logger_Warn "TRAIN_DATA_PATH:$TRAIN_DATA_PATH not valid path"; return 1; }
    check_path_valid "$EVAL_DATA_PATH" || { logger_Warn "EVAL_DATA_PATH:$EVAL_DATA_PATH not valid path"; return 1; }
}

case "$1" in
    train) node_train ;;
    eval) node_eval ;;
    check) node_check "$2" ;;
    *) logger_Warn "invalid argument '$1'"; exit 1 ;;
esac
