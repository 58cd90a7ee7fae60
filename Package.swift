// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "keepalive",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "keepalive", targets: ["keepalive"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Only for the benchmark that compares it with the store's own sqlite3 wrapper.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // C libraries, linked from the system (Debian / Raspberry Pi OS packages).
        .systemLibrary(
            name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(
            name: "CGPS", path: "Sources/CGPS", pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),

        // fork + PR_SET_PDEATHSIG + exec for bridge programs that must die with the agent.
        .target(name: "CSpawn", path: "Sources/CSpawn"),

        // Steps from foot pods (RSC 0x2A53) and a chest strap's accelerometer: parsers and
        // algorithms only, Foundation at most (docs/steps.md).
        .target(name: "StepCounting"),
        .testTarget(name: "StepCountingTests", dependencies: ["StepCounting", "TestKit"]),

        .target(
            name: "Store",
            dependencies: ["CSQLite", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "Bus",
            dependencies: ["CMosquitto", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "Agent",
            dependencies: [
                "Store", "Bus", "CGPS", "CSpawn", "StepCounting", "SleepStaging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .executableTarget(
            name: "keepalive",
            dependencies: ["Agent", .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        // `swift run -c release keepalive-bench`: figures as ratios against baselines run alongside.
        .executableTarget(
            name: "keepalive-bench",
            dependencies: ["Agent", "Store", "Bus", "CSQLite", "TestKit", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Sources/Bench"),

        // The benchmark's memory baseline: only Foundation and a time zone (see its main.swift).
        .executableTarget(name: "keepalive-rss-floor", path: "Sources/RSSFloor"),

        // Sleep from the heart-rate strap: sleepecg's ws-gru-mesa wake/sleep classifier, ported (docs/sleep.md).
        // Optimised in debug builds too: classifying a night unoptimised takes ~25x the CPU (6.4 s
        // instead of 0.25 s), which the test suite's parallel runs then fight over.
        .target(name: "SleepStaging", exclude: ["Model/LICENSE.sleepecg"], swiftSettings: [.unsafeFlags(["-O"])]),
        // `keepalive-sleep-bench`: CPU of classifying a night, next to the real sleepecg on the same night.
        .executableTarget(name: "keepalive-sleep-bench", dependencies: ["SleepStaging"], path: "Sources/SleepBench"),

        // Test support: real mosquitto, gpsd via gpsfake, the agent binary, MQTT clients.
        .target(name: "TestKit", dependencies: ["CSpawn"], path: "Tests/TestKit"),
        .testTarget(name: "TestKitTests", dependencies: ["TestKit"]),
        .testTarget(name: "AgentTests", dependencies: ["Agent", "Bus", "Store", "TestKit"]),
        // The fault-injection suite: off unless KEEPALIVE_FAULTS=1 (scripts/faults.sh).
        .testTarget(name: "FaultTests", dependencies: ["Agent", "Bus", "Store", "TestKit"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "TestKit"]),
        .testTarget(name: "BusTests", dependencies: ["Bus", "TestKit"]),
        .testTarget(name: "SleepStagingTests", dependencies: ["SleepStaging", "TestKit"]),
    ],
    swiftLanguageModes: [.v6]
)
