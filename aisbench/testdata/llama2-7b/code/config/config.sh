export PYTHON_COMMAND=python3
# only_pretrain or only_finetune
export LLAMA_RUN_MODE=only_pretrain
export PRETRAIN_DATA_PATH=${BASE_PATH}/data/wikitext-2
export RANK_SIZE=2
export DEVICE_NUM=2
