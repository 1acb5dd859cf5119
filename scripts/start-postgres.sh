#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests of package store and
# prints its DSN on stdout (everything else goes to stderr):
#
#   export AIMETER_TEST_POSTGRES=$(scripts/start-postgres.sh)
#
# It installs Debian's postgresql when initdb is missing (as root, or through
# sudo), creates a cluster in a new temporary directory with trust
# authentication for one user, and starts it on a free loopback port
# (AIMETER_PG_PORT, or the first free one from 55432). PostgreSQL refuses to
# run as root: as root the cluster belongs to the system user postgres.
# Stop it with: pg_ctl -D DIR/data stop (DIR is printed on stderr).
set -euo pipefail

pgbin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

bin=$(pgbin || true)
if [ -z "$bin" ]; then
  echo "start-postgres: installing Debian's postgresql" >&2
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >&2
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends postgresql >&2
  bin=$(pgbin)
fi

port=${AIMETER_PG_PORT:-}
if [ -z "$port" ]; then
  for p in $(seq 55432 55532); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
  done
fi
[ -n "$port" ] || { echo "start-postgres: no free port in 55432-55532" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/aimeter-pg.XXXXXX")
as=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  chown postgres "$dir"
  as=(runuser -u postgres --)
fi
"${as[@]}" "$bin/initdb" -D "$dir/data" -U aimeter --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200" \
  start >&2 || { cat "$dir/server.log" >&2; exit 1; }
echo "start-postgres: cluster in $dir, port $port (stop: ${as[*]} $bin/pg_ctl -D $dir/data stop)" >&2
echo "postgres://aimeter@127.0.0.1:$port/postgres?sslmode=disable"
