#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for the tests and the benchmark (never for production).
#   scripts/postgres-cluster.sh start DIR [PORT]   create the cluster in DIR the first time, start it,
#                                                  and print its URL (default port 54329)
#   scripts/postgres-cluster.sh stop DIR            fast shutdown (sessions are cut off)
#   scripts/postgres-cluster.sh destroy DIR         stop and delete DIR
# The server runs as an unprivileged user: the caller, or when the caller is root, the system user
# payservice-pg (created if missing). It listens on 127.0.0.1 only, with password authentication
# (scram-sha-256) for the user payservice, whose password is in DIR/password.
set -euo pipefail
command=${1:?usage: postgres-cluster.sh start|stop|destroy DIR [PORT]}
dir=${2:?usage: postgres-cluster.sh start|stop|destroy DIR [PORT]}
port=${3:-54329}

bin=$(dirname "$(command -v pg_ctl 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)")
as_server() {
  if [ "$(id -u)" = 0 ]; then runuser -u payservice-pg -- "$@"; else "$@"; fi
}

case "$command" in
start)
  if [ "$(id -u)" = 0 ] && ! id payservice-pg >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin payservice-pg
  fi
  mkdir -p "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$dir/password"
    [ "$(id -u)" = 0 ] && chown -R payservice-pg "$dir"
    chmod 700 "$dir"
    as_server "$bin/initdb" --pgdata="$dir/data" --username=payservice --pwfile="$dir/password" \
      --auth-host=scram-sha-256 --auth-local=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    echo "$port" > "$dir/port"
    [ "$(id -u)" = 0 ] && chown payservice-pg "$dir/port"
  fi
  port=$(cat "$dir/port")
  if ! as_server "$bin/pg_ctl" --pgdata="$dir/data" status >/dev/null 2>&1; then
    as_server "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --silent \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir' -c max_connections=200" start
  fi
  echo "postgres://payservice:$(cat "$dir/password")@127.0.0.1:$port/postgres"
  ;;
stop)
  as_server "$bin/pg_ctl" --pgdata="$dir/data" --mode=fast --wait --silent stop
  ;;
destroy)
  as_server "$bin/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait --silent stop 2>/dev/null || true
  rm -rf "$dir"
  ;;
*)
  echo "postgres-cluster.sh: unknown command $command" >&2
  exit 64
  ;;
esac
