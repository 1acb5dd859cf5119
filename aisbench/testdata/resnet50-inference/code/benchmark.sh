#!/bin/bash
CUR_PATH=$(dirname $(readlink -f "$0"))
. $CUR_PATH/config/config.sh

check_python_package_is_install() { $PYTHON_COMMAND -c "import $1" >/dev/null 2>&1; }

check_python_package_is_install aclruntime || { echo "aclruntime not installed"; exit 1; }
check_python_package_is_install loadgen || { echo "loadgen not installed"; exit 1; }

$PYTHON_COMMAND $CUR_PATH/main.py --profile=$PROFILE --model $MODEL_PATH --query_arrival_mode=$QUERY_ARRIVAL_MODE \
    --maxloadsamples_count=$MAX_LOADSAMPLES_COUNT --samples_count=$SAMPLE_COUNT --cache_path=$CACHE_PATH \
    --batchsize=$BATCH_SIZE --dataset_path=$DATASET_PATH --device_id=$DEVICE_ID || exit 1
$PYTHON_COMMAND $CUR_PATH/ais_utils.py set_result "inference" "result" "OK"
