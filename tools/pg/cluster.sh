#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: `start DIR` makes one in DIR (initdb as an
# unprivileged user, listening only on a Unix socket in DIR and on a free loopback port) and
# prints the URL to export as SESSIONDB_TEST_PG; `stop DIR` stops it and removes DIR.
# `start DIR --ssl CERT KEY` makes a cluster that serves TLS with that certificate and key
# (PEM files) and accepts TCP connections over TLS only (the TLS tests of issue 17);
# `start DIR --ssl CERT KEY CLIENT_CA` also requires a client certificate signed by
# CLIENT_CA whose common name is the user's (`cert` authentication).
# `start DIR --password SECRET` makes a cluster whose TCP logins need that password (SCRAM;
# the Unix socket stays trusted): the password tests of issue 17.
# PostgreSQL refuses to run as root, so under root the cluster belongs to the `postgres`
# system user (created by Debian's package) or, failing that, to `nobody`.
set -euo pipefail

bin_dir() {
    if command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
        return
    fi
    # Debian installs the server binaries outside PATH, one folder per major version.
    local found
    found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    [ -n "$found" ] || { echo "pg: no PostgreSQL server binaries (initdb) found" >&2; exit 1; }
    echo "$found"
}

owner() {
    if [ "$(id -u)" -ne 0 ]; then
        id -un
    elif id postgres >/dev/null 2>&1; then
        echo postgres
    else
        echo nobody
    fi
}

as_owner() {
    local user="$1"
    shift
    if [ "$(id -un)" = "$user" ]; then
        "$@"
    else
        runuser -u "$user" -- "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    local dir="$1" bin user port ssl_opts=""
    bin="$(bin_dir)"
    user="$(owner)"
    mkdir -p "$dir"
    chown "$user" "$dir" 2>/dev/null || true
    chmod 700 "$dir"
    local auth=(--auth=trust)
    if [ "${2:-}" = "--password" ]; then
        printf '%s\n' "$3" >"$dir/password"
        chown "$user" "$dir/password" 2>/dev/null || true
        auth=(--auth-local=trust --auth-host=scram-sha-256 "--pwfile=$dir/password")
    fi
    as_owner "$user" "$bin/initdb" -D "$dir/data" -U sessiondb "${auth[@]}" -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/password"
    if [ "${2:-}" = "--ssl" ]; then
        install -m 600 -o "$user" "$3" "$dir/data/server.crt"
        install -m 600 -o "$user" "$4" "$dir/data/server.key"
        # TCP only over TLS: a client that did not encrypt is refused, so a test that
        # connects proves it used TLS.
        local method=trust
        ssl_opts="-c ssl=on"
        if [ -n "${5:-}" ]; then
            install -m 600 -o "$user" "$5" "$dir/data/root.crt"
            method=cert
            ssl_opts="$ssl_opts -c ssl_ca_file=root.crt"
        fi
        printf '%s\n' 'local all all trust' "hostssl all all 127.0.0.1/32 $method" \
            'hostnossl all all 127.0.0.1/32 reject' >"$dir/data/pg_hba.conf"
    fi
    port="$(free_port)"
    as_owner "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off -c max_connections=200 $ssl_opts" \
        start >/dev/null \
        || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://sessiondb@127.0.0.1:$port/postgres"
}

stop() {
    local dir="$1" bin user
    bin="$(bin_dir)"
    user="$(owner)"
    if [ -d "$dir/data" ]; then
        as_owner "$user" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

case "${1:-}" in
    start) start "$2" "${@:3}" ;;
    stop) stop "$2" ;;
    *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
