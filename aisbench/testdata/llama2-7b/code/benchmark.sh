#!/bin/bash
# Entry script run by the stubs (2.0): init, run_train, run_eval, get_result.
declare -i ret_ok=0
declare -i ret_init_failed=1
declare -i ret_run_train_failed=2
declare -i ret_run_eval_failed=3
declare -i ret_get_result_failed=4
declare -i ret_mode_failed=5

CUR_PATH=$(dirname $(readlink -f "$0"))
export CODE_PATH=$CUR_PATH
export BASE_PATH=$(cd "$CUR_PATH/../";pwd)
export DEPEND_PATH=$BASE_PATH/dependencies/

source ${CODE_PATH}/config/config.sh || exit $ret_init_failed

. $CODE_PATH/common/log_util.sh
. $CODE_PATH/common/common.sh
. $CODE_PATH/cluster_offline_run.sh

main(){
    case "$LLAMA_RUN_MODE" in
        only_pretrain|only_finetune) ;;
        *) logger_Warn "run mode $LLAMA_RUN_MODE not supported"; return $ret_mode_failed ;;
    esac
    init || { logger_Warn "init failed:$?";return $ret_init_failed; }
    run_train || { logger_Warn "run_train failed ret:$?";return $ret_run_train_failed; }
    run_eval || { logger_Warn "run_eval failed ret:$?";return $ret_run_eval_failed; }
    get_result || { logger_Warn "get_result failed ret:$?";return $ret_get_result_failed; }
    return $ret_ok
}

main "$@"
exit $?
