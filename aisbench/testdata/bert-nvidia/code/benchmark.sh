#!/bin/bash
declare -i ret_ok=0
declare -i ret_invalid_args=1

CUR_PATH=$(dirname $(readlink -f "$0"))
export BASE_PATH=$(cd "$CUR_PATH/../";pwd)

. $CUR_PATH/common/log_util.sh
. $CUR_PATH/common/common.sh
. $CUR_PATH/common/calc_power.sh
. $CUR_PATH/common/calc_resourceinfo.sh

set_config_env() {
    export PYTHONPATH=$PYTHONPATH:${CUR_PATH}:${CUR_PATH}/code
    source $CUR_PATH/config/config_pretrain.sh
}

check_sys() {
    check_path_valid $BERT_CONFIG_DIR || { logger_Warn "BERT_CONFIG_DIR:${BERT_CONFIG_DIR} not valid path"; return $ret_invalid_args; }
    check_file_valid $TRAIN_DATA_PATH || { logger_Warn "TRAIN_DATA_PATH:${TRAIN_DATA_PATH} not valid path"; return $ret_invalid_args; }
}

main() {
    set_config_env
    check_sys || exit $ret_invalid_args
    calc_powerinfo_backgroud
    device_group=(0)
    run_resourceinfo_monitor_backgroud_gpu
    bash $CUR_PATH/run.sh
    calc_runing_resourceinfo_gpu $CUR_PATH/ais_utils.py $device_group
    set_powerinfo
}

main "$@" |& tee "${BASE_PATH}/log/detail.log"
exit $?
