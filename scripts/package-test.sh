#!/usr/bin/env bash
# The package test (part of scripts/test.sh, as root): builds the .deb, checks its metadata,
# contents and lintian, the unit with systemd-analyze (verify; security exposure <= 2.5),
# installs it with dpkg -i, runs the installed geomon, and purges it again, checking that
# purge leaves nothing behind. It installs geomon's own package only, and refuses to run when a
# geomon package is already installed (it would replace it).
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "package-test: skipped (needs root to install the package)" >&2; exit 0; }
# Holds the version this test installed, from the install to the purge: a run killed in
# between left that package behind, which the next run purges instead of refusing to start
# (a package installed otherwise, or another version, is left alone).
marker=/var/tmp/geomon-package-test.installed
if dpkg-query -W -f='${Status}' geomon 2>/dev/null | grep -q "install ok installed"; then
    installed=$(dpkg-query -W -f='${Version}' geomon 2>/dev/null || true)
    if [ -s "$marker" ] && [ "$(cat "$marker")" = "$installed" ]; then
        echo "package-test: purging the package an interrupted run of this test left installed" >&2
        dpkg --purge geomon >/dev/null 2>&1 || fail "cannot purge the package an earlier run left"
        rm -f "$marker"
    else
        fail "a geomon package is installed on this machine; the test would replace it"
    fi
fi

deb=$(bash scripts/package-deb.sh | tail -1)
echo "package-test: $deb ($(du -h "$deb" | cut -f1))"
# A failed build fails package-deb.sh, and no package is made from an older binary: a `swift`
# that fails stands in for a broken build (the scratch path now holds the release build just made).
fakebin=$(mktemp -d)
printf '#!/bin/sh\necho "error: stand-in for a failed build" >&2\nexit 1\n' > "$fakebin/swift"
chmod +x "$fakebin/swift"
if PATH="$fakebin:$PATH" OUT="$fakebin/out" WORK="$fakebin/work" LINTIAN=0 bash scripts/package-deb.sh > "$fakebin/log" 2>&1; then
    cat "$fakebin/log" >&2; rm -rf "$fakebin"; fail "package-deb.sh exited 0 although the build failed"
fi
ls "$fakebin"/out/*.deb >/dev/null 2>&1 && { rm -rf "$fakebin"; fail "package-deb.sh made a package although the build failed"; }
grep -q "the release build failed" "$fakebin/log" || { cat "$fakebin/log" >&2; rm -rf "$fakebin"; fail "package-deb.sh did not say the build failed"; }
rm -rf "$fakebin"
echo "package-test: a failed build fails package-deb.sh and makes no package"
version=$(dpkg-deb --field "$deb" Version)
[ "$version" = "$(.build/package/*/release/geomon --version | awk '{print $2}')" ] || fail "version $version is not geomon --version's"
depends=$(dpkg-deb --field "$deb" Depends)
for lib in libyaml-0-2 libsqlite3-0 libgps28 libmosquitto1 libsystemd0 adduser; do
    case "$depends" in *"$lib"*) ;; *) fail "Depends lacks $lib: $depends" ;; esac
done
case "$depends" in *swift*) fail "Depends names a Swift library: $depends" ;; esac
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for path in ./usr/bin/geomon ./usr/lib/systemd/system/geomon@.service ./etc/geomon/geofence-only.yaml \
            ./etc/geomon/fitness.yaml ./etc/geomon/social-radar.yaml ./etc/geomon/hooks/notify.sh \
            ./usr/share/doc/geomon/copyright ./usr/share/doc/geomon/README.md ./usr/share/doc/geomon/docs/publish.md \
            ./usr/share/man/man1/geomon.1.gz ./usr/share/man/man5/geomon-profile.5.gz \
            ./usr/share/bash-completion/completions/geomon; do
    grep -qx "$path" <<<"$contents" || fail "the package lacks $path"
done
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)
grep -qx /etc/geomon/geofence-only.yaml <<<"$conffiles" || fail "profiles are not conffiles"
echo "package-test: lintian:"
lintian --tag-display-limit 0 --fail-on error "$deb" 2>/dev/null | sed 's/^/  /' || fail "lintian reports errors"

# The unit before installing: verify against the staged binary, and the exposure bound.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
sed "s#/usr/bin/geomon#$PWD/dist/build/deb/geomon_${version}_$(dpkg --print-architecture)/usr/bin/geomon#g" dist/systemd/geomon@.service > "$stage/geomon@.service"
out=$(systemd-analyze verify --man=no "$stage/geomon@.service" 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
systemd-analyze security --offline=yes --threshold=25 dist/systemd/geomon@.service > "$stage/security.txt" 2>&1 \
    || { cat "$stage/security.txt" >&2; fail "exposure above 2.5"; }
echo "package-test: $(grep 'Overall exposure' "$stage/security.txt")"

purge() { dpkg --purge geomon >/dev/null 2>&1 && rm -f "$marker" || true; }
trap 'purge; rm -rf "$stage"' EXIT
dpkg -i "$deb" > "$stage/install.log" 2>&1 || { cat "$stage/install.log" >&2; fail "dpkg -i"; }
dpkg-query -W -f='${Version}' geomon > "$marker"
[ "$(/usr/bin/geomon --version)" = "geomon $version" ] || fail "/usr/bin/geomon --version"
/usr/bin/geomon validate /etc/geomon/geofence-only.yaml > "$stage/validate.txt" 2>&1 || { cat "$stage/validate.txt" >&2; fail "validate of the installed profile"; }
getent passwd geomon >/dev/null || fail "no geomon user"
[ "$(stat -c '%a %U' /var/lib/geomon)" = "700 geomon" ] || fail "/var/lib/geomon is $(stat -c '%a %U' /var/lib/geomon)"
man -w geomon >/dev/null 2>&1 && man -w 5 geomon-profile >/dev/null 2>&1 || fail "man pages not found by man"
out=$(systemd-analyze verify geomon@geofence-only.service 2>&1) || fail "systemd-analyze verify of the installed unit: $out"
bash -c 'source /usr/share/bash-completion/completions/geomon; COMP_WORDS=(geomon val); COMP_CWORD=1; _geomon; [ "${COMPREPLY[*]}" = validate ]' \
    || fail "the installed completion does not complete"
echo "package-test: installed: $(/usr/bin/geomon --version), validate ok, user geomon, /var/lib/geomon 0700, man pages, completion, unit verified"

# Remove keeps the user, the databases and the configuration; purge removes them.
dpkg --remove geomon > "$stage/remove.log" 2>&1 || { cat "$stage/remove.log" >&2; fail "dpkg --remove"; }
[ ! -e /usr/bin/geomon ] || fail "/usr/bin/geomon left after remove"
getent passwd geomon >/dev/null || fail "remove deleted the geomon user"
[ -d /var/lib/geomon ] || fail "remove deleted /var/lib/geomon"
[ -e /etc/geomon/geofence-only.yaml ] || fail "remove deleted the conffiles"
echo "package-test: removed: binary gone; user, /var/lib/geomon and /etc/geomon kept"
dpkg --purge geomon > "$stage/purge.log" 2>&1 || { cat "$stage/purge.log" >&2; fail "dpkg --purge"; }
rm -f "$marker"
trap 'rm -rf "$stage"' EXIT
[ ! -e /usr/bin/geomon ] || fail "/usr/bin/geomon left after purge"
[ ! -e /var/lib/geomon ] || fail "/var/lib/geomon left after purge"
[ ! -e /etc/geomon ] || fail "/etc/geomon left after purge"
! getent passwd geomon >/dev/null || fail "user geomon left after purge"
! getent group geomon >/dev/null || fail "group geomon left after purge"
echo "package-test: purged: no binary, no /etc/geomon, no /var/lib/geomon, no user or group left"
