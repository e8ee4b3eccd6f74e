// swift-tools-version:6.0
// geomon — low-power geofence and significant-change monitor for Linux.
// Layers (dependencies point down only): geomon → GeomonDaemon → adapters → GeomonCore.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "geomon",
    products: [
        .executable(name: "geomon", targets: ["geomon"]),
    ],
    targets: [
        // C libraries from Debian, one system-library target each.
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Tiny C target for what Swift cannot reach (_GNU_SOURCE spawn helpers).
        .target(name: "CGeomonShims"),
        // Header-only CPU cache prefetch hint for the core's fence index (no I/O, no state).
        .target(name: "CMemoryHints"),

        // The pure decision core: no Foundation, no C libraries (only the prefetch hint), no
        // clock, no I/O.
        .target(name: "GeomonCore", dependencies: ["CMemoryHints"], swiftSettings: strict),

        // The kernel's clocks, read in one place (for the shell and the adapters).
        .target(name: "GeomonSystem", dependencies: ["GeomonCore", "CGeomonShims"], swiftSettings: strict),

        // Pure, above the core: one JSON writer, number and explanation text.
        .target(name: "GeomonFormat", dependencies: ["GeomonCore"], swiftSettings: strict),
        // Pure, above the core: replay's receiver model, energy accounting, event matching.
        .target(name: "GeomonEvaluation", dependencies: ["GeomonCore"], swiftSettings: strict),

        // Pure, above the core: the SVG map and timeline of a run.
        .target(name: "GeomonPictures", dependencies: ["GeomonCore", "GeomonFormat"], swiftSettings: strict),

        // Adapters: each wraps one outside thing.
        .target(name: "GeomonConfig", dependencies: ["GeomonCore", "GeomonFormat", "CYAML", "CZlib", "CGeomonShims"], swiftSettings: strict),
        .target(name: "GeomonStore", dependencies: ["GeomonCore", "GeomonSystem", "GeomonFormat", "CSQLite"], swiftSettings: strict),
        .target(name: "GeomonSources", dependencies: ["GeomonCore", "GeomonSystem", "GeomonFormat", "CGPS", "CGeomonShims"], swiftSettings: strict),
        .target(name: "GeomonHooks", dependencies: ["GeomonCore", "GeomonSystem", "GeomonFormat", "CGeomonShims"], swiftSettings: strict),
        .target(name: "GeomonPublish", dependencies: ["GeomonCore", "GeomonSystem", "GeomonFormat", "CMosquitto"], swiftSettings: strict),
        .target(name: "GeomonGeoClue", dependencies: ["GeomonCore", "GeomonSystem", "CSystemd"], swiftSettings: strict),

        // The imperative shell: event loop, clock, signals, wiring.
        .target(
            name: "GeomonDaemon",
            dependencies: ["GeomonCore", "GeomonSystem", "GeomonFormat", "GeomonEvaluation", "GeomonPictures", "GeomonConfig", "GeomonStore", "GeomonSources", "GeomonHooks", "GeomonPublish", "GeomonGeoClue"],
            swiftSettings: strict
        ),
        // The commands: declared options, parsing, help, and what each command does.
        .target(
            name: "GeomonCommands",
            dependencies: ["GeomonCore", "GeomonSystem", "GeomonFormat", "GeomonEvaluation", "GeomonPictures", "GeomonConfig", "GeomonStore", "GeomonSources", "GeomonHooks", "GeomonPublish", "GeomonGeoClue", "GeomonDaemon"],
            swiftSettings: strict
        ),
        .executableTarget(name: "geomon", dependencies: ["GeomonCommands"], swiftSettings: strict),

        // Test helpers shared by the test targets (fixtures, temp dirs, running the binary).
        .target(name: "GeomonTestSupport", dependencies: ["GeomonCore"], swiftSettings: strict),

        .testTarget(name: "GeomonPublishTests", dependencies: ["GeomonPublish"], swiftSettings: strict),
        .testTarget(name: "GeomonCoreTests", dependencies: ["GeomonCore", "GeomonFormat", "GeomonEvaluation", "GeomonTestSupport"], swiftSettings: strict),
        .testTarget(name: "GeomonConfigTests", dependencies: ["GeomonConfig", "GeomonFormat", "GeomonTestSupport"], swiftSettings: strict),
        .testTarget(name: "GeomonStoreTests", dependencies: ["GeomonStore", "GeomonTestSupport"], swiftSettings: strict),
        .testTarget(name: "GeomonSourcesTests", dependencies: ["GeomonSources", "GeomonTestSupport"], swiftSettings: strict),
        .testTarget(name: "GeomonHooksTests", dependencies: ["GeomonHooks", "GeomonSystem", "GeomonFormat", "GeomonStore", "GeomonDaemon", "GeomonTestSupport"], swiftSettings: strict),
        .testTarget(name: "GeomonDaemonTests", dependencies: ["GeomonDaemon", "GeomonEvaluation", "GeomonFormat", "GeomonPictures", "GeomonConfig", "GeomonStore", "GeomonSources", "GeomonGeoClue", "GeomonTestSupport"], swiftSettings: strict),
        .testTarget(name: "GeomonCommandsTests", dependencies: ["GeomonCommands", "GeomonCore", "GeomonDaemon"], swiftSettings: strict),
        .testTarget(name: "GeomonCLITests", dependencies: ["GeomonCore", "GeomonTestSupport"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
