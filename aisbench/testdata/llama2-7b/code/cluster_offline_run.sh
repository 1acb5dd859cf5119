#!/bin/bash
# One node: the work folder gets the code and the logging dependencies,
# as the cluster wheel would copy them to every node.

init()
{
    logger_Info "-------------------------------- init start --------------------------------"
    export WORK_PATH=${BASE_PATH}/work
    export RESULT_PATH=${WORK_PATH}/result
    rm -rf $WORK_PATH; mkdir -p $RESULT_PATH
    cp -rf $CODE_PATH/* $WORK_PATH/ || return 1
    cp -rf $DEPEND_PATH/logging $WORK_PATH/logging || return 1
    export PYTHONPATH=$WORK_PATH/logging:$WORK_PATH:$PYTHONPATH
    check_env_common || return 1
    check_path_valid $PRETRAIN_DATA_PATH || { logger_Warn "PRETRAIN_DATA_PATH:$PRETRAIN_DATA_PATH not valid"; return 1; }
    logger_Info "-------------------------------- init end --------------------------------"
}

run_train()
{
    logger_Info "-------------------------------- train start --------------------------------"
    export LLAMA_CUR_RUN_MODE=train
    bash $WORK_PATH/run_node.sh train || return 1
    logger_Info "-------------------------------- train end --------------------------------"
}

run_eval()
{
    logger_Info "-------------------------------- eval start --------------------------------"
    bash $WORK_PATH/run_node.sh eval || return 1
    logger_Info "-------------------------------- eval end --------------------------------"
}

get_result()
{
    logger_Info "-------------------------------- get_result start --------------------------------"
    $PYTHON_COMMAND $CODE_PATH/common/calc_llm_result.py $RESULT_PATH $RANK_SIZE $LLAMA_RUN_MODE || return 1
    cp -rf $RESULT_PATH/* $BASE_PATH/result/
    logger_Info "-------------------------------- get_result end --------------------------------"
}
