#!/bin/bash
check_path_valid() { [ -n "$1" ] && [ -e "$1" ]; }

check_env_common()
{
    : "${PYTHON_COMMAND?PYTHON_COMMAND not set}"
    : "${RANK_SIZE?RANK_SIZE not set}"
    command -v $PYTHON_COMMAND >/dev/null || { logger_Warn "$PYTHON_COMMAND not found"; return 1; }
}
