#!/bin/bash
declare -i ret_train_failed=2
CUR_PATH=$(dirname $(readlink -f "$0"))
export BASE_PATH=$(cd "$CUR_PATH/../";pwd)

. $CUR_PATH/common/log_util.sh
. $CUR_PATH/common/common.sh

run_train() {
    rm -rf $BASE_PATH/work
    mkdir -p $BASE_PATH/work
    cp $CUR_PATH/code/* $BASE_PATH/work -rf
    train_run_cmd="$PYTHON_COMMAND -u $BASE_PATH/work/run_pretraining.py --input_file=$TRAIN_DATA_PATH \
        --output_dir=$BASE_PATH/work --num_train_steps=$TRAIN_STEPS --train_batch_size=$BATCH_SIZE"
    logger_Info "train run cmd:$train_run_cmd"
    $train_run_cmd || { ret=$ret_train_failed; logger_Warn "run train failed ret:$?"; }
    logger_Info "train run done cmd:$train_run_cmd"
    return $ret
}

main() {
    # The date goes unquoted, as in the public run.sh: the value splits in two.
    $PYTHON_COMMAND $CUR_PATH/ais_utils.py set_result "training" "proc_start_time" $(date "+%Y-%m-%d %H:%M:%S")
    run_train || { logger_Warn "train failed ret:$?"; return $ret_train_failed; }
    $PYTHON_COMMAND $CUR_PATH/ais_utils.py set_result "training" "proc_end_time" $(date "+%Y-%m-%d %H:%M:%S")
    callback_throught_rate=$(grep "examples/sec:" ${BASE_PATH}/log/detail.log | tail -n 1 | awk '{print $NF}')
    echo "actual callback_throught_rate:$callback_throught_rate"
    $PYTHON_COMMAND $CUR_PATH/ais_utils.py set_result "training" "result" "OK"
}

main "$@"
exit $?
