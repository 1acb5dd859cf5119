#!/bin/bash
# Checks and the single-node stand-ins of the cluster helpers: without
# NODEINFO_FILE every command runs on this machine.

check_path_valid() { [ -n "$1" ] && [ -d "$1" ]; }

check_python_package_is_install()
{
    $1 -c "import $2" >/dev/null 2>&1
}

check_env_common()
{
    : "${PYTHON_COMMAND?PYTHON_COMMAND not set}"
    : "${RANK_SIZE?RANK_SIZE not set}"
    : "${DEVICE_NUM?DEVICE_NUM not set}"
    command -v $PYTHON_COMMAND >/dev/null || { logger_Warn "$PYTHON_COMMAND not found"; return 1; }
}

cluster_run_cmd_serial() { local nodes=$1; shift; [ -z "$nodes" ] || { logger_Warn "multi-node runs need ssh: not in this package"; return 1; }; bash -c "$*"; }
cluster_run_cmd_parallel() { cluster_run_cmd_serial "$@"; }
cluster_run_cmd_single() { cluster_run_cmd_serial "$@"; }
cluster_scp() { local nodes=$1 src=$2 dst=$3; [ -z "$nodes" ] || return 1; mkdir -p $dst && cp -rf $src/* $dst/; }
cluster_rscp() { [ -z "$1" ] || return 1; return 0; }
