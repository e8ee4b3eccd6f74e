#!/usr/bin/env bash
# Installs the system packages geomon needs, only when something is missing.
# Safe to run repeatedly; needs root (or sudo) only when it has to install.
set -euo pipefail

packages=(pkg-config libyaml-dev zlib1g-dev tzdata libsqlite3-dev libgps-dev libmosquitto-dev libsystemd-dev gpsd gpsd-clients mosquitto mosquitto-clients openssl dbus geoclue-2.0 geoclue-2-demo util-linux sqlite3 libxml2-utils librsvg2-bin python3 python3-dbus python3-gi dpkg-dev binutils lintian man-db systemd adduser)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    # gpsd's package would start a system gpsd on :2947; tests run their own on free ports.
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # Likewise mosquitto's package starts a system broker on :1883; tests start their own.
    if command -v systemctl >/dev/null 2>&1; then
        $sudo systemctl disable --now gpsd.socket gpsd.service mosquitto.service >/dev/null 2>&1 || true
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
