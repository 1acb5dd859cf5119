#!/bin/bash
# Log lines as the workloads print them:
# 2022-07-13T13:24:43 -Ais-Bench-Stubs- INFO run_eval(cluster_offline_run.sh:32) - text
MODE_NAME="Ais-Bench-Stubs"

_where() { caller 2 | awk '{n=split($3,p,"/"); print $2"("p[n]":"$1")"}'; }

_log()
{
    local level=$1
    shift
    echo "$(date +%Y-%m-%dT%T) -${MODE_NAME}- ${level} $(_where) - $*"
}

logger_Debug() { echo "Debug: $*"; }
logger_Info() { _log INFO "$@"; }
logger_Warn() { _log WARN "$@"; }
logger_Error() { _log ERROR "$@"; }
