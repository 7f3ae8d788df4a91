#!/usr/bin/env bash
# Opt-in end-to-end test of the Matrix adapter against a real Synapse.
#
# Debian ships matrix-synapse in its unstable suite only, so this script debootstraps
# a small unstable chroot under .state/synapse/ from the machine's own configured
# Debian mirror, installs matrix-synapse in it, runs it on loopback with a generated
# config (registration shared secret, no federation), runs test/e2e against it and
# stops it. The encrypted-room test's human is an independent E2EE client, Debian's
# python3-matrix-nio with python3-olm, installed on the host (run with /usr/bin/python3).
# Needs root (debootstrap, chroot, apt-get) and access to the Debian mirror.
#
#   scripts/synapse-e2e.sh install   # debootstrap + matrix-synapse (once), nio + olm on the host
#   scripts/synapse-e2e.sh start     # write config, start Synapse, wait until it answers
#   scripts/synapse-e2e.sh stop      # stop Synapse
#   scripts/synapse-e2e.sh test [vitest args]  # install (if needed), start, run test/e2e, stop
#
# Environment: SYNAPSE_PORT (default: a free loopback port chosen at start),
# SYNAPSE_STATE (default .state/synapse).
set -euo pipefail

cd "$(dirname "$0")/.."
STATE="${SYNAPSE_STATE:-$PWD/.state/synapse}"
ROOT="$STATE/root"
DATA=/var/lib/roomgate-synapse # inside the chroot
LOG="$STATE/synapse.out"

log() { printf 'synapse-e2e: %s\n' "$*" >&2; }

# A loopback port nothing listens on now (others run Synapse on this machine too).
free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# The first Debian archive URI of the machine's apt sources (deb822 or one-line form),
# so the chroot comes from the same mirror the machine already uses.
debian_mirror() {
  local uri
  uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' |
    grep -v -- '-security' | grep '/debian/\?$' | head -n1 || true)
  if [ -z "$uri" ]; then
    uri=$(grep -hsE '^deb\s' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '{print $2}' | grep -v -- '-security' | grep '/debian/\?$' | head -n1 || true)
  fi
  [ -n "$uri" ] || { log "no Debian mirror found in /etc/apt/sources.list*"; exit 1; }
  printf '%s\n' "${uri%/}"
}

mount_proc() {
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
}

unmount_proc() {
  if mountpoint -q "$ROOT/proc"; then umount "$ROOT/proc"; fi
}

# The human side of the encrypted-room test: an E2EE client that is not roomgate's.
install_human() {
  if /usr/bin/python3 -c 'import nio, olm' 2>/dev/null; then return; fi
  log "installing python3-matrix-nio and python3-olm"
  apt-get update -qq </dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matrix-nio python3-olm </dev/null
}

install() {
  install_human
  if [ -x "$ROOT/usr/bin/python3" ] && chroot "$ROOT" python3 -c 'import synapse' 2>/dev/null; then
    log "matrix-synapse already installed in $ROOT"
    return
  fi
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
  local mirror
  mirror=$(debian_mirror)
  mkdir -p "$STATE"
  if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
    log "debootstrap unstable from $mirror into $ROOT"
    debootstrap --variant=minbase --include=ca-certificates unstable "$ROOT" "$mirror"
  fi
  # Services must not start inside the chroot while packages install.
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod +x "$ROOT/usr/sbin/policy-rc.d"
  # The machine's mirror may be a dated snapshot whose Release files have expired.
  echo 'Acquire::Check-Valid-Until "false";' >"$ROOT/etc/apt/apt.conf.d/99roomgate-snapshot"
  mount_proc
  chroot "$ROOT" sh -c 'echo "matrix-synapse matrix-synapse/server-name string localhost
matrix-synapse matrix-synapse/report-stats boolean false" | debconf-set-selections'
  chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends matrix-synapse
  log "matrix-synapse installed: $(chroot "$ROOT" dpkg-query -W -f '${Version}' matrix-synapse)"
  unmount_proc
}

configure() {
  local dir="$ROOT$DATA"
  PORT="${SYNAPSE_PORT:-$(free_port)}"
  mkdir -p "$dir"
  if [ ! -f "$dir/homeserver.yaml" ]; then
    chroot "$ROOT" python3 -m synapse.app.homeserver --server-name localhost \
      --config-path "$DATA/homeserver.yaml" --data-directory "$DATA" \
      --generate-config --report-stats=no >/dev/null
  fi
  [ -f "$STATE/shared-secret" ] || head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$STATE/shared-secret"
  # Synapse merges several --config-path files, later ones winning: the generated
  # file keeps its keys and paths, this one puts it on loopback for the test.
  cat >"$dir/roomgate.yaml" <<EOF
listeners:
  - port: $PORT
    tls: false
    type: http
    x_forwarded: false
    bind_addresses: ["127.0.0.1"]
    resources:
      - names: [client]
        compress: false
registration_shared_secret: "$(cat "$STATE/shared-secret")"
enable_registration: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
rc_message: { per_second: 50, burst_count: 100 }
rc_joins: { local: { per_second: 50, burst_count: 100 } }
rc_invites: { per_room: { per_second: 50, burst_count: 100 }, per_user: { per_second: 50, burst_count: 100 } }
rc_login: { address: { per_second: 50, burst_count: 100 }, account: { per_second: 50, burst_count: 100 } }
rc_registration: { per_second: 50, burst_count: 100 }
EOF
  echo "$PORT" >"$STATE/port"
}

start() {
  install
  # Synapse runs without /proc; a /proc mounted inside the work tree would break tools
  # that walk it (prettier --check .), so it is mounted only while packages install.
  unmount_proc
  if [ -f "$STATE/synapse.pid" ] && kill -0 "$(cat "$STATE/synapse.pid")" 2>/dev/null; then
    PORT=$(cat "$STATE/port")
    log "Synapse already running (pid $(cat "$STATE/synapse.pid"))"
  else
    configure
    chroot "$ROOT" python3 -m synapse.app.homeserver \
      --config-path "$DATA/homeserver.yaml" --config-path "$DATA/roomgate.yaml" >"$LOG" 2>&1 &
    echo $! >"$STATE/synapse.pid"
  fi
  for _ in $(seq 1 120); do
    if curl -sf "http://127.0.0.1:$PORT/_matrix/client/versions" >/dev/null; then
      log "Synapse answers on http://127.0.0.1:$PORT"
      return
    fi
    sleep 1
  done
  log "Synapse did not answer within 120 s; see $LOG"
  tail -n 40 "$LOG" >&2 || true
  exit 1
}

stop() {
  if [ -f "$STATE/synapse.pid" ]; then
    local pid
    pid=$(cat "$STATE/synapse.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    rm -f "$STATE/synapse.pid"
  fi
  unmount_proc
}

run_test() {
  start
  trap stop EXIT
  SYNAPSE_URL="http://127.0.0.1:$PORT" SYNAPSE_SHARED_SECRET="$(cat "$STATE/shared-secret")" \
    npx vitest run --config test/e2e/vitest.config.ts "$@"
}

case "${1:-test}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  test)
    shift || true
    run_test "$@"
    ;;
  *)
    log "usage: $0 [install|start|stop|test]"
    exit 2
    ;;
esac
