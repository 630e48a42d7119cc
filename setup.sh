#!/usr/bin/env bash
# Idempotent set-up of everything the kit needs on a fresh Debian machine:
# system packages (bubblewrap for the grading sandbox, chromium and npm for the page tests),
# then a local virtual environment .venv with pinned Python packages, and axe-core (npm) in .node for the
# accessibility test of the pages the kit writes.
set -euo pipefail
cd "$(dirname "$0")"

need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
if [[ "${A3_SKIP_CHROMIUM:-0}" != 1 ]] && ! command -v chromium >/dev/null 2>&1; then need_apt+=(chromium); fi
if [[ "${A3_SKIP_CHROMIUM:-0}" != 1 ]] && ! command -v npm >/dev/null 2>&1; then need_apt+=(npm); fi  # axe-core
if ((${#need_apt[@]})); then
  sudo_=""; [[ $(id -u) == 0 ]] || sudo_="sudo"
  echo "setup: installing system packages: ${need_apt[*]}"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
stamp=.venv/.a3-installed
want=$(cat requirements-torch.txt requirements.txt | sha256sum | cut -c1-16)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  echo "setup: installing Python packages into .venv (first run takes a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements-torch.txt
  .venv/bin/python -m pip install -q -r requirements.txt -c requirements-torch.txt
  .venv/bin/python -m pip install -q -e . --no-deps
  echo "$want" > "$stamp"
fi
# axe-core checks the kit's pages against WCAG 2.1 AA in the test suite (tests/reports/axe.py)
AXE_VERSION=4.14.1
if command -v npm >/dev/null 2>&1 && ! grep -qs "\"version\": \"$AXE_VERSION\"" .node/node_modules/axe-core/package.json; then
  echo "setup: installing axe-core $AXE_VERSION into .node"
  mkdir -p .node
  npm install --silent --no-audit --no-fund --prefix .node "axe-core@$AXE_VERSION" >/dev/null
fi
echo "setup: ready (.venv)"
