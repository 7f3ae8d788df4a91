#!/usr/bin/env bash
# Takes a fresh clone on Debian/Ubuntu with Node >= 20 to a built roomgate:
# redis-server from the system packages when it is missing, the locked npm
# dependencies, and the compiled CLI. Its own output goes to stderr, so a piped
# demo prints only the conversation.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

if ! command -v redis-server >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: redis-server is missing and apt-get is not available; install redis-server with your package manager." >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing redis-server with apt-get"
  $sudo apt-get update -qq </dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server </dev/null
fi

# npm ci only when the installed tree is older than the lockfile (or absent).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund </dev/null
fi
npm run --silent build </dev/null
