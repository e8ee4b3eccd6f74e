#!/usr/bin/env bash
# Fuzz geomon's input readers with libFuzzer + AddressSanitizer.
#
#   scripts/fuzz.sh [TARGET|all|list|build] [SECONDS]     (default: all 60)
#
# Targets: see TARGETS below (harnesses in Fuzz/TARGET/). Each target is built with
# `swiftc -sanitize=fuzzer,address`, seeded from the real fixtures in Tests/Fixtures, and run
# for SECONDS. Prints executions, exec/s, corpus size and any crash; exits 1 when any target
# crashed (the input is kept in .build/fuzz/crashes/TARGET/). Build outputs: .build/fuzz/.
# Extra libFuzzer flags can be passed in FUZZ_FLAGS (e.g. FUZZ_FLAGS="-seed=1"); FUZZ_JOBS
# fuzzers run side by side (default 2, one per core).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=.build/fuzz
TARGETS_SOURCES=(nmea gpsd-json gpx track)
TARGETS_CONFIG=(profile-yaml geojson places)

# The config targets exist once GeomonConfig has its real loaders (Fuzz/<target>/ present).
TARGETS=("${TARGETS_SOURCES[@]}")
for t in "${TARGETS_CONFIG[@]}"; do [[ -d Fuzz/$t ]] && TARGETS+=("$t"); done

WHAT=${1:-all}
SECONDS_PER_TARGET=${2:-60}
if [[ $WHAT == list ]]; then printf '%s\n' "${TARGETS[@]}"; exit 0; fi
if [[ $WHAT == all || $WHAT == build ]]; then
    RUN=("${TARGETS[@]}")
else
    [[ -d Fuzz/$WHAT ]] || { echo "fuzz.sh: error: unknown target '$WHAT' (have: ${TARGETS[*]})" >&2; exit 64; }
    RUN=("$WHAT")
fi
[[ $SECONDS_PER_TARGET =~ ^[0-9]+$ ]] || { echo "fuzz.sh: error: SECONDS must be a whole number" >&2; exit 64; }

mkdir -p "$OUT"/mod "$OUT"/lib "$OUT"/bin "$OUT"/obj "$OUT"/shims

# CGeomonShims has no module map of its own (SwiftPM makes one from its include/): the same one
# here, and its C compiled with the same sanitizers.
cat > "$OUT/shims/module.modulemap.new" <<MAP
module CGeomonShims {
    header "$ROOT/Sources/CGeomonShims/include/geomon_shims.h"
    export *
}
MAP
cmp -s "$OUT/shims/module.modulemap.new" "$OUT/shims/module.modulemap" 2>/dev/null \
    || mv "$OUT/shims/module.modulemap.new" "$OUT/shims/module.modulemap"
rm -f "$OUT/shims/module.modulemap.new"

# Same language settings as Package.swift; optimised so each second buys more executions
# (bounds and overflow checks stay on at -O).
SWIFTFLAGS=(-swift-version 6 -O -g -parse-as-library -sanitize=fuzzer,address
    -enable-upcoming-feature InternalImportsByDefault
    -enable-upcoming-feature MemberImportVisibility
    -enable-upcoming-feature ExistentialAny
    -I "$OUT/mod"
    -Xcc -fmodule-map-file=Sources/CYAML/module.modulemap
    -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap
    -Xcc -fmodule-map-file=Sources/CGPS/module.modulemap
    -Xcc -fmodule-map-file=Sources/CMemoryHints/include/module.modulemap
    -Xcc -fmodule-map-file="$OUT/shims/module.modulemap")

# A change of flags rebuilds everything.
if [[ "$(cat "$OUT/flags" 2>/dev/null)" != "${SWIFTFLAGS[*]}" ]]; then
    rm -f "$OUT"/lib/* "$OUT"/bin/*
    echo "${SWIFTFLAGS[*]}" > "$OUT/flags"
fi

# Rebuilds $1 when it is missing or older than any of the remaining paths.
stale() {
    local out=$1; shift
    [[ ! -e $out ]] && return 0
    [[ -n $(find "$@" -newer "$out" -print -quit 2>/dev/null) ]]
}

# The C shims: libCGeomonShims.a.
build_shims() {
    local lib=$OUT/lib/libCGeomonShims.a
    if stale "$lib" Sources/CGeomonShims; then
        echo "fuzz.sh: building CGeomonShims" >&2
        clang -O1 -g -fsanitize=fuzzer-no-link,address -ISources/CGeomonShims/include \
            -c Sources/CGeomonShims/shims.c -o "$OUT/obj/shims.o"
        ar rcs "$lib" "$OUT/obj/shims.o"
    fi
}

# A library module: libNAME.a + NAME.swiftmodule from Sources/NAME.
build_lib() {
    local name=$1
    local lib=$OUT/lib/lib$name.a
    if stale "$lib" "Sources/$name" "${@:2}"; then
        echo "fuzz.sh: building $name" >&2
        local files
        mapfile -t files < <(find "Sources/$name" -name '*.swift' | sort)
        swiftc "${SWIFTFLAGS[@]}" -wmo -module-name "$name" \
            -emit-library -static -emit-module -emit-module-path "$OUT/mod/$name.swiftmodule" \
            -o "$lib" "${files[@]}"
    fi
}

# One fuzzer executable from Fuzz/Common + Fuzz/TARGET, linked against the library modules.
build_target() {
    local t=$1 bin=$OUT/bin/$1
    local libs=(-lGeomonSources -lGeomonSystem -lGeomonFormat -lGeomonCore -lCGeomonShims -lgps -lFoundation -lFoundationEssentials) deps=("$OUT/lib/libGeomonSources.a")
    case $t in
        profile-yaml|geojson|places) libs=(-lGeomonConfig -lGeomonFormat -lGeomonCore -lCGeomonShims -lyaml -lz -lFoundation -lFoundationEssentials); deps=("$OUT/lib/libGeomonConfig.a") ;;
    esac
    if stale "$bin" Fuzz/Common "Fuzz/$t" "$OUT/lib/libGeomonCore.a" "${deps[@]}"; then
        echo "fuzz.sh: building fuzzer $t" >&2
        local files
        mapfile -t files < <(find Fuzz/Common "Fuzz/$t" -name '*.swift' | sort)
        local module
        module=$(echo "Fuzz_$t" | tr -c 'A-Za-z0-9_\n' '_')
        swiftc "${SWIFTFLAGS[@]}" -wmo -module-name "$module" -L "$OUT/lib" "${libs[@]}" \
            -o "$bin" "${files[@]}" 2> >(grep -v "Cannot export local symbol" >&2)
    fi
}

# Seeds: the real fixtures for the target, the first MAX_LEN bytes of each (libFuzzer mutates
# small inputs far faster; the head of a log holds every sentence type it uses). Regression
# inputs are copied whole.
MAX_LEN=4096
seed() {
    local t=$1 dir=$OUT/corpus/$1
    mkdir -p "$dir"
    local files=()
    case $t in
        nmea) files=(Tests/Fixtures/tracks/*.log Tests/Fixtures/tracks/*.nmea) ;;
        gpsd-json) files=(Tests/Fixtures/tracks/*.chk-gpsd3.22*) ;;
        gpx) files=(Tests/Fixtures/tracks/*.gpx) ;;
        track) files=(Tests/Fixtures/tracks/*.log Tests/Fixtures/tracks/*.nmea Tests/Fixtures/tracks/*.gpx Tests/Fixtures/tracks/*.chk-gpsd3.22*) ;;
        profile-yaml) mapfile -t files < <(find Tests/Fixtures/profiles -type f \( -name '*.yaml' -o -name '*.yml' \) 2>/dev/null | sort) ;;
        geojson) mapfile -t files < <(find Tests/Fixtures -type f \( -name '*.geojson' -o -name '*.json' \) 2>/dev/null | sort) ;;
        places) mapfile -t files < <(find Tests/Fixtures/places -type f ! -name '*.md' 2>/dev/null | sort) ;;
    esac
    if [[ -d Tests/Fixtures/fuzz-regressions/$t ]]; then
        mapfile -t -O "${#files[@]}" files < <(find "Tests/Fixtures/fuzz-regressions/$t" -type f ! -name '*.md' | sort)
    fi
    for f in "${files[@]}"; do
        [[ -f $f ]] || continue
        head -c "$MAX_LEN" "$f" > "$dir/seed-$(basename "$f")"
    done
}

# Waits for background builds; fails when any failed.
wait_all() {
    local pid ok=0
    for pid in "$@"; do wait "$pid" || ok=1; done
    [[ $ok -eq 0 ]] || { echo "fuzz.sh: error: build failed" >&2; exit 1; }
}

# Two at a time (the CI machine has two cores): the adapters side by side, then the fuzzers.
build_shims
build_lib GeomonCore
build_lib GeomonFormat "$OUT/lib/libGeomonCore.a"
build_lib GeomonSystem "$OUT/lib/libGeomonCore.a" "$OUT/lib/libCGeomonShims.a"
pids=()
build_lib GeomonSources "$OUT/lib/libGeomonCore.a" "$OUT/lib/libCGeomonShims.a" "$OUT/lib/libGeomonSystem.a" "$OUT/lib/libGeomonFormat.a" & pids+=($!)
if [[ -d Fuzz/profile-yaml || -d Fuzz/geojson ]]; then
    build_lib GeomonConfig "$OUT/lib/libGeomonCore.a" "$OUT/lib/libGeomonFormat.a" "$OUT/lib/libCGeomonShims.a" & pids+=($!)
fi
wait_all "${pids[@]}"
pids=()
for t in "${RUN[@]}"; do
    build_target "$t" & pids+=($!)
    if [[ ${#pids[@]} -ge 2 ]]; then wait_all "${pids[@]}"; pids=(); fi
done
[[ ${#pids[@]} -eq 0 ]] || wait_all "${pids[@]}"
[[ $WHAT == build ]] && exit 0

# Swift's own crash backtracer would run inside ASan and hide the report; libFuzzer prints the
# stack itself. Leaks are out of scope (Swift's runtime caches look like leaks to LSan).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

# Runs one fuzzer for SECONDS_PER_TARGET; its exit status is libFuzzer's (0 = no crash).
run_target() {
    local t=$1
    local crashes=$OUT/crashes/$t log=$OUT/logs/$t.log dict=()
    mkdir -p "$crashes"
    [[ -f Fuzz/$t/$t.dict ]] && dict=(-dict="Fuzz/$t/$t.dict")
    # shellcheck disable=SC2086
    "$OUT/bin/$t" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
        -max_len="$MAX_LEN" -print_final_stats=1 -artifact_prefix="$crashes/" "${dict[@]}" ${FUZZ_FLAGS:-} \
        "$OUT/corpus/$t" > "$log" 2>&1
}

# One line per target: executions, exec/s, corpus size, crash.
report() {
    local t=$1 rc=$2 log=$OUT/logs/$1.log
    local execs rate corpus line
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    # After a crash there are no final stats: the last status line has the count.
    [[ -n $execs ]] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    corpus=$(find "$OUT/corpus/$t" -type f | wc -l)
    line="$t: executions=${execs:-?} exec/s=${rate:-?} corpus=$corpus"
    if [[ $rc -ne 0 ]]; then
        line+=" CRASH (exit $rc), see $log"
        grep -E 'ERROR: |FUZZ INVARIANT|Fatal error|Swift runtime failure|SUMMARY|Test unit written' "$log" | head -20 >&2 || true
    else
        line+=" crashes=0"
    fi
    echo "$line"
}

# FUZZ_JOBS fuzzers at a time (default: one per core, at most 2), each a single process.
JOBS=${FUZZ_JOBS:-$(( $(nproc) < 2 ? 1 : 2 ))}
mkdir -p "$OUT/logs"
failed=()
for ((i = 0; i < ${#RUN[@]}; i += JOBS)); do
    batch=("${RUN[@]:i:JOBS}")
    pids=()
    for t in "${batch[@]}"; do
        seed "$t"
        echo "fuzz.sh: running $t for ${SECONDS_PER_TARGET}s ($(find "$OUT/corpus/$t" -type f | wc -l) corpus files)" >&2
        run_target "$t" & pids+=($!)
    done
    for k in "${!batch[@]}"; do
        rc=0
        wait "${pids[$k]}" || rc=$?
        report "${batch[$k]}" "$rc"
        [[ $rc -eq 0 ]] || failed+=("${batch[$k]}")
    done
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz.sh: crashed: ${failed[*]}" >&2
    exit 1
fi
