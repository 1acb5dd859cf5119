#!/usr/bin/env bash
# Installs the peer load generators that aimeter's network benchmarks are
# compared with, and the third-party servers and clients of its
# interoperability tests, pinned, into aimeter's cache. The benchmarks are
# run by hand (see internal/netbench); CI installs only kserve-python, for
# the MLServer and tritonclient tests and the MLPerf Training result-log
# tests (internal/peerstest, internal/mllogtest).
#
#   $AIMETER_CACHE/bin/vegeta       github.com/tsenart/vegeta/v12 (Go)
#   $AIMETER_CACHE/bin/ghz          github.com/bojand/ghz (Go)
#   $AIMETER_CACHE/bin/wrk          Debian's wrk (a link to /usr/bin/wrk)
#   $AIMETER_CACHE/peers-venv/      Python virtualenv with aiperf, guidellm,
#                                   mlserver, tritonclient[all] and
#                                   mlperf-logging (several GB)
#   $AIMETER_CACHE/kserve-venv/     Python virtualenv with only mlserver and
#                                   tritonclient[all], the KServe v2 peers of
#                                   the interoperability tests, and MLCommons'
#                                   mlperf-logging (compliance checker and
#                                   result summarizer of MLPerf Training logs)
#                                   and DuckDB (reads records.parquet: package
#                                   bundle's tests, and internal/shardtest's
#                                   exact percentiles of merged shards), and
#                                   the accuracy scorers' references (numpy,
#                                   scikit-learn, sacrebleu, rouge-score,
#                                   pycocotools, nltk, Levenshtein, shapely)
#                                   (about 500 MB; .ci/run installs it)
#   $AIMETER_CACHE/aiperf-venv/     Python virtualenv with only aiperf, for
#                                   scripts/bench-aiperf.sh and
#                                   scripts/compare-peers.sh
#   $AIMETER_CACHE/guidellm-venv/   Python virtualenv with only guidellm, for
#                                   scripts/compare-peers.sh (about 6 GB: it pulls
#                                   in PyTorch with its CUDA libraries)
#   $AIMETER_CACHE/endpoints-venv/  Python virtualenv with MLCommons' MLPerf
#                                   Endpoints submission checker
#                                   (endpoints-submission-cli) and plotter
#                                   (mlperf-viz), for the tests of aimeter
#                                   export --endpoints (about 60 MB; .ci/run
#                                   installs it)
#
# Each tool is installed only when missing; a failed one is reported and the
# others still install. The exit status is the number of tools that failed.
#
# Usage: scripts/install-peers.sh [tool...]   (tools: vegeta ghz wrk python
#                                              kserve-python aiperf guidellm
#                                              endpoints-python; default all
#                                              but kserve-python, aiperf,
#                                              guidellm and endpoints-python)
# Environment: AIMETER_CACHE (default $HOME/.cache/aimeter).
set -uo pipefail

cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
bindir="$cache/bin"
venv="$cache/peers-venv"
mkdir -p "$bindir"
export PATH="/usr/local/go/bin:$PATH"

vegeta_version=v12.13.0
ghz_version=v0.120.0
# scorer_pins are the reference implementations that the accuracy scorers
# are cross-checked against (package accuracy's tests).
scorer_pins=(numpy==2.4.6 scikit-learn==1.7.2 sacrebleu==2.5.1 rouge-score==0.1.2 pycocotools==2.0.10 nltk==3.9.2 Levenshtein==0.27.1 shapely==2.1.2)
kserve_pins=(mlserver==1.7.1 "tritonclient[all]==2.73.0" mlperf-logging==4.1.68 duckdb==2.0.1 "${scorer_pins[@]}")
endpoints_pins=(endpoints-submission-cli==1.5.3.0 mlperf-viz==2.0.0)
py_pins=(aiperf==0.13.0 guidellm==0.8.1 "${kserve_pins[@]}")

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  export DEBIAN_FRONTEND=noninteractive
  { [ -n "${apt_updated:-}" ] || apt-get update -qq; } && apt_updated=1 &&
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

go_tool() { # name module@version [go install flags]
  local name=$1 mod=$2
  shift 2
  if [ -x "$bindir/$name" ]; then return 0; fi
  local work; work=$(mktemp -d)
  (cd "$work" && GOFLAGS= GOBIN="$work/bin" go install "$@" "$mod") &&
    mv -f "$work/bin/$name" "$bindir/$name"
  local rc=$?
  rm -rf "$work"
  return $rc
}

# The -X flags stamp the versions that the tools' release builds print.
install_vegeta() { go_tool vegeta "github.com/tsenart/vegeta/v12@$vegeta_version" -ldflags "-X main.Version=$vegeta_version" && "$bindir/vegeta" -version; }
install_ghz() { go_tool ghz "github.com/bojand/ghz/cmd/ghz@$ghz_version" -ldflags "-X main.version=$ghz_version" && "$bindir/ghz" --version; }
install_wrk() { apt_install wrk && ln -sf "$(command -v wrk)" "$bindir/wrk" && { "$bindir/wrk" --version || true; } | head -n 1; }

# venv_install DIR PIN...: a virtualenv at DIR holding the pins.
venv_install() {
  local dir=$1
  shift
  apt_install python3-venv || return 1
  if [ ! -x "$dir/bin/python" ]; then
    /usr/bin/python3 -m venv "$dir" || return 1
  fi
  # The stamp records the pins last installed: pip's own check of an
  # installed set takes half a minute.
  local stamp="$dir/.aimeter-pins"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$*" ]; then
    "$dir/bin/pip" install -q --disable-pip-version-check "$@" || return 1
    echo "$*" > "$stamp"
  fi
}

check_kserve_peers() { # bin dir
  "$1/mlserver" --version &&
    "$1/python" -c 'import tritonclient.http, tritonclient.grpc, importlib.metadata as m; print("tritonclient", m.version("tritonclient"))' &&
    "$1/python" -c 'import mlperf_logging, mlperf_logging.compliance_checker.mlp_compliance, importlib.metadata as m; print("mlperf-logging", m.version("mlperf-logging"))' &&
    "$1/python" -c 'import duckdb; print("duckdb", duckdb.__version__)' &&
    "$1/python" -c 'import numpy, sklearn, sacrebleu, rouge_score, pycocotools, nltk, Levenshtein, shapely; print("scorer references: numpy", numpy.__version__, "scikit-learn", sklearn.__version__, "sacrebleu", sacrebleu.__version__)'
}

# aiperf alone, for scripts/bench-aiperf.sh (the peers-venv is several GB).
install_aiperf() {
  venv_install "$cache/aiperf-venv" aiperf==0.13.0 && "$cache/aiperf-venv/bin/aiperf" --version
}

# guidellm alone, for scripts/compare-peers.sh.
install_guidellm() {
  venv_install "$cache/guidellm-venv" guidellm==0.8.1 && "$cache/guidellm-venv/bin/guidellm" --version
}

# MLPerf Endpoints' checker and plotter, in their own virtualenv: their
# pydantic and PyYAML pins stay apart from the peers'.
install_endpoints-python() {
  venv_install "$cache/endpoints-venv" "${endpoints_pins[@]}" &&
    "$cache/endpoints-venv/bin/endpoints-submission-cli" --version &&
    "$cache/endpoints-venv/bin/python" -c 'import importlib.metadata as m; print("mlperf-viz", m.version("mlperf-viz"))'
}

install_kserve-python() {
  venv_install "$cache/kserve-venv" "${kserve_pins[@]}" && check_kserve_peers "$cache/kserve-venv/bin"
}

install_python() {
  venv_install "$venv" "${py_pins[@]}" || return 1
  local rc=0
  "$venv/bin/aiperf" --version || rc=1
  "$venv/bin/guidellm" --version || rc=1
  check_kserve_peers "$venv/bin" || rc=1
  return $rc
}

tools=("$@")
[ ${#tools[@]} -eq 0 ] && tools=(vegeta ghz wrk python)
failed=0
for t in "${tools[@]}"; do
  case $t in
    vegeta | ghz | wrk | python | kserve-python | aiperf | guidellm | endpoints-python) ;;
    *) echo "install-peers: unknown tool $t (want vegeta, ghz, wrk, python, kserve-python, aiperf, guidellm or endpoints-python)" >&2; exit 2 ;;
  esac
  start=$SECONDS
  if "install_$t"; then
    echo "install-peers: $t ok ($((SECONDS - start)) s)"
  else
    echo "install-peers: $t FAILED ($((SECONDS - start)) s)" >&2
    failed=$((failed + 1))
  fi
done
exit $failed
