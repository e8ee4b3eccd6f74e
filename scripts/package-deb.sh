#!/usr/bin/env bash
# Builds dist/out/geomon_VERSION_ARCH.deb: a release build with the Swift runtime linked
# statically (the package needs no Swift installation), Depends computed by dpkg-shlibdeps from
# the C libraries it links, the hardened template unit, /etc/geomon (profiles, fences, hooks,
# plugins; conffiles), docs, the man pages geomon(1) (`geomon manual`) and geomon-profile(5)
# (scripts/profile-man.py from docs/profile-reference.md), and the bash completion
# (`geomon completion bash`). The version is `geomon --version`'s. No debhelper.
#
#   scripts/package-deb.sh                 build, package, lintian (errors fail)
#   GEOMON_BIN=PATH scripts/package-deb.sh package a binary built elsewhere
#   LINTIAN=0 scripts/package-deb.sh       skip lintian
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$REPO/dist/out}
WORK=${WORK:-$REPO/dist/build/deb}
MAINTAINER=${MAINTAINER:-geomon maintainers <geomon@example.org>}
ARCH=$(dpkg --print-architecture)
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

if [ -z "${GEOMON_BIN:-}" ]; then
    # --disable-local-rpath: no RUNPATH; -z now: full RELRO; its own scratch path, so the
    # development release build (benchmarks) is not rebuilt with these flags.
    flags=(-c release --static-swift-stdlib --disable-local-rpath --scratch-path "$REPO/.build/package"
           -Xlinker -z -Xlinker now)
    # A failed build fails the script: the package is made from the build just made, never
    # from an older binary left in the scratch path.
    build_log=$(mktemp)
    if ! (cd "$REPO" && swift build "${flags[@]}" --product geomon) > "$build_log" 2>&1; then
        grep -E "error" "$build_log" >&2 || tail -30 "$build_log" >&2
        rm -f "$build_log"
        echo "package-deb: the release build failed; no package made" >&2
        exit 1
    fi
    grep -E "warning: unre" "$build_log" >&2 || true
    rm -f "$build_log"
    GEOMON_BIN=$(cd "$REPO" && swift build "${flags[@]}" --show-bin-path)/geomon
fi
[ -x "$GEOMON_BIN" ] || { echo "package-deb: no binary at $GEOMON_BIN" >&2; exit 1; }
VERSION=$("$GEOMON_BIN" --version | awk '{print $2}')
DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
PKG=geomon_${VERSION}_${ARCH}
ROOT=$WORK/$PKG

rm -rf "$WORK"
mkdir -p "$ROOT/DEBIAN" "$OUT" "$WORK/debian"
umask 022

install -D -m 0755 "$GEOMON_BIN" "$ROOT/usr/bin/geomon"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$ROOT/usr/bin/geomon"
install -D -m 0644 "$REPO/dist/systemd/geomon@.service" "$ROOT/usr/lib/systemd/system/geomon@.service"

install -d -m 0755 "$ROOT/etc/geomon/hooks" "$ROOT/etc/geomon/fences" "$ROOT/etc/geomon/plugins"
install -m 0644 "$REPO"/profiles/*.yaml "$ROOT/etc/geomon/"
# The installed profiles keep their databases where the service keeps them, /var/lib/geomon:
# the repository's 'storage.path: state/…' (beside the file, for the demo) is left out.
sed -i -e '/^  # Relative to this file, so the demo runs without root/,/^  # the default is/d' \
    -e '/^  path: state\//d' "$ROOT"/etc/geomon/*.yaml
if grep -n 'path: state/' "$ROOT"/etc/geomon/*.yaml; then echo "package-deb: a profile keeps a storage.path under /etc" >&2; exit 1; fi
install -m 0644 "$REPO"/profiles/fences/*.geojson "$ROOT/etc/geomon/fences/"
install -m 0755 "$REPO"/profiles/hooks/*.sh "$ROOT/etc/geomon/hooks/"
install -m 0755 "$REPO"/profiles/plugins/*.sh "$ROOT/etc/geomon/plugins/"

DOC=$ROOT/usr/share/doc/geomon
install -D -m 0644 "$REPO/README.md" "$DOC/README.md"
install -m 0644 "$REPO/CHANGELOG.md" "$DOC/CHANGELOG.md"
install -d -m 0755 "$DOC/docs"
install -m 0644 "$REPO"/docs/*.md "$DOC/docs/"
install -m 0644 "$REPO/dist/debian/copyright" "$DOC/copyright"
{
    printf 'geomon (%s) unstable; urgency=medium\n\n' "$VERSION"
    printf '  * Built from geomon %s (%s).\n\n' "$VERSION" "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    printf ' -- %s  %s\n' "$MAINTAINER" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$DOC/changelog.gz"

install -d -m 0755 "$ROOT/usr/share/man/man1" "$ROOT/usr/share/man/man5"
"$GEOMON_BIN" manual --date "$DATE" | gzip -9n > "$ROOT/usr/share/man/man1/geomon.1.gz"
python3 "$REPO/scripts/profile-man.py" "$REPO/docs/profile-reference.md" "$VERSION" "$DATE" | gzip -9n > "$ROOT/usr/share/man/man5/geomon-profile.5.gz"
install -d -m 0755 "$ROOT/usr/share/bash-completion/completions"
"$GEOMON_BIN" completion bash > "$ROOT/usr/share/bash-completion/completions/geomon"
# Strings of the statically linked Swift runtime and ICU data, not geomon's.
install -D -m 0644 /dev/stdin "$ROOT/usr/share/lintian/overrides/geomon" <<'OVR'
geomon: spelling-error-in-binary * [usr/bin/geomon]
OVR
chmod 0644 "$ROOT"/usr/share/man/man*/*.gz "$DOC/changelog.gz" "$ROOT/usr/share/bash-completion/completions/geomon"
find "$ROOT" -type d -exec chmod 0755 {} +

install -m 0755 "$REPO"/dist/debian/postinst "$REPO"/dist/debian/prerm "$REPO"/dist/debian/postrm "$ROOT/DEBIAN/"
(cd "$ROOT" && find etc -type f | LC_ALL=C sort | sed 's#^#/#') > "$ROOT/DEBIAN/conffiles"
: > "$WORK/debian/control"
SHLIBS=$(cd "$WORK" && dpkg-shlibdeps -O "-e$PKG/usr/bin/geomon" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$SHLIBS" ] || { echo "package-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
INSTALLED_SIZE=$(du -s -k --apparent-size --exclude=DEBIAN "$ROOT" | cut -f1)
cat > "$ROOT/DEBIAN/control" <<CTL
Package: geomon
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $INSTALLED_SIZE
Depends: adduser, $SHLIBS
Recommends: gpsd, tzdata
Suggests: bash-completion, geoclue-2.0, mosquitto
Section: misc
Priority: optional
Description: low-power geofence and significant-change monitor
 geomon reads positions from gpsd, GeoClue2 or a coarse location command,
 decides geofence enter, exit and dwell events and significant location
 changes with a power policy that wakes the GNSS receiver only when a
 boundary could be near, stores them in SQLite, and delivers them to hook
 programs and to an MQTT broker in the OwnTracks format.
 .
 One systemd service instance per profile: geomon@NAME runs
 /etc/geomon/NAME.yaml.
CTL
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums" "$ROOT/DEBIAN/conffiles"

dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$OUT/$PKG.deb" >/dev/null
if [ "${LINTIAN:-1}" != 0 ] && command -v lintian >/dev/null; then
    lintian --tag-display-limit 0 --fail-on error "$OUT/$PKG.deb" 2>/dev/null
fi
echo "$OUT/$PKG.deb"
