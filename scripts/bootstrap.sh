#!/usr/bin/env bash
# Installs the system packages geomon needs, only when something is missing.
# Safe to run repeatedly; needs root (or sudo) only when it has to install.
set -euo pipefail

packages=(pkg-config time libyaml-dev zlib1g-dev tzdata libsqlite3-dev libgps-dev libmosquitto-dev libsystemd-dev gpsd gpsd-clients mosquitto mosquitto-clients openssl dbus geoclue-2.0 geoclue-2-demo util-linux sqlite3 libxml2-utils librsvg2-bin python3 python3-dbus python3-gi dpkg-dev binutils lintian man-db systemd adduser)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    # apt's lock may be held a while by a fresh machine's daily update.
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
    if ! $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/tmp/geomon-bootstrap.log 2>&1; then
        echo "bootstrap: error: apt-get install failed (its output: /tmp/geomon-bootstrap.log)" >&2
        tail -n 20 /tmp/geomon-bootstrap.log >&2
        exit 1
    fi
    # gpsd's package starts a system gpsd on :2947 and mosquitto's a broker on :1883; the tests
    # run their own on free ports. Only the services just installed are stopped: a gpsd or
    # broker the machine had before is its own.
    if command -v systemctl >/dev/null 2>&1; then
        for p in "${missing[@]}"; do
            case $p in
                gpsd) $sudo systemctl disable --now gpsd.socket gpsd.service >/dev/null 2>&1 || true ;;
                mosquitto) $sudo systemctl disable --now mosquitto.service >/dev/null 2>&1 || true ;;
            esac
        done
    fi
fi

if ! command -v swift >/dev/null 2>&1; then
    if [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    else
        echo "bootstrap: error: the Swift 6 toolchain is not installed (see https://www.swift.org/install/linux/)" >&2
        exit 69
    fi
fi
