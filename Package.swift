// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "keepalive",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "keepalive", targets: ["keepalive"]),
        // For the benchmark package in Benchmarks/, which measures these from outside.
        .library(name: "KeepAliveAgent", targets: ["Agent"]),
        .library(name: "KeepAliveStore", targets: ["Store"]),
        .library(name: "KeepAliveBus", targets: ["Bus"]),
        .library(name: "SleepStaging", targets: ["SleepStaging"]),
        .library(name: "KeepAliveTestKit", targets: ["TestKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // C libraries, linked from the system (Debian / Raspberry Pi OS packages).
        .systemLibrary(
            name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(
            name: "CGPS", path: "Sources/CGPS", pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]),
        // <sys/timex.h>: whether the kernel's clock is synchronised.
        .systemLibrary(name: "CTimex", path: "Sources/CTimex"),
        // <malloc.h>: mallopt, glibc's allocator settings for the agent.
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        // O_DIRECT for the ingest journal's slot writes.
        .systemLibrary(name: "CDirectIO", path: "Sources/CDirectIO"),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // FFTW 3, double precision: the sleep features' spectra (SleepStaging/Features/RealFFT.swift).
        .systemLibrary(
            name: "CFFTW", path: "Sources/CFFTW", pkgConfig: "fftw3",
            providers: [.apt(["libfftw3-dev"])]),

        // PostgreSQL's client library, for the fleet archive (`keepalive archive`, docs/fleet.md):
        // libpq-fe.h's functions, loaded from libpq.so.5 on first use (Sources/CLibPQ says why).
        .target(name: "CLibPQ", path: "Sources/CLibPQ", linkerSettings: [.linkedLibrary("dl")]),

        // fork + PR_SET_PDEATHSIG + exec for bridge programs that must die with the agent.
        .target(name: "CSpawn", path: "Sources/CSpawn"),

        // What a sensor bridge sends (docs/contract.md "Heart rate: the bridge"): the NDJSON line
        // and every characteristic it carries, decoded by the published rules (0x2A37 Heart Rate
        // Measurement, 0x2A53 RSC Measurement, Polar's pmd_acc batches). Foundation only.
        .target(name: "SensorBridge"),
        .testTarget(name: "SensorBridgeTests", dependencies: ["SensorBridge", "TestKit"]),

        // Steps from foot pods (RSC 0x2A53) and a chest strap's accelerometer: algorithms only,
        // on SensorBridge's decoded values, Foundation at most (docs/steps.md).
        .target(name: "StepCounting", dependencies: ["SensorBridge"]),
        .testTarget(name: "StepCountingTests", dependencies: ["StepCounting", "SensorBridge", "TestKit"]),

        .target(
            name: "Store",
            dependencies: ["CSQLite", "CDirectIO", "Supervision", .product(name: "Logging", package: "swift-log")]),
        // What every owned loop needs: a thread with a stop and interruptible pauses, backoff, uptime.
        .target(name: "Supervision"),
        .target(
            name: "Bus",
            dependencies: ["CMosquitto", "Supervision", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "Agent",
            dependencies: [
                "Store", "Bus", "Supervision", "CGPS", "CTimex", "CMalloc", "CSpawn", "SensorBridge", "StepCounting", "SleepStaging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // `keepalive archive`, the fleet's PostgreSQL archiver (docs/fleet.md): a target of its own
        // that a Pi's agent never runs; it answers with the agent's own request parsing and replies.
        .target(
            name: "Archive",
            dependencies: [
                "Agent", "Bus", "CLibPQ", "Supervision",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "keepalive",
            dependencies: ["Agent", "Archive", .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        // The benchmarks are a package of their own: Benchmarks/ (scripts/bench.sh).

        // Sleep from the heart-rate strap: sleepecg's ws-gru-mesa wake/sleep classifier, ported (docs/sleep.md).
        // Optimised in debug builds too: classifying a night unoptimised takes ~25x the CPU (6.4 s
        // instead of 0.25 s), which the test suite's parallel runs then fight over.
        .target(name: "SleepStaging", dependencies: ["CFFTW"], exclude: ["Model/LICENSE.sleepecg"], swiftSettings: [.unsafeFlags(["-O"])]),

        // Test support: real mosquitto, gpsd via gpsfake, the agent binary, MQTT clients.
        .target(name: "TestKit", dependencies: ["CSpawn", "Store"], path: "Tests/TestKit"),
        .testTarget(name: "TestKitTests", dependencies: ["TestKit"]),
        .testTarget(name: "AgentTests", dependencies: ["Agent", "Bus", "Store", "SensorBridge", "StepCounting", "TestKit"]),
        // The fault-injection suite: off unless KEEPALIVE_FAULTS=1 (scripts/faults.sh).
        .testTarget(name: "FaultTests", dependencies: ["Agent", "Bus", "Store", "SensorBridge", "TestKit"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "TestKit"]),
        .testTarget(name: "BusTests", dependencies: ["Bus", "TestKit"]),
        .testTarget(name: "SleepStagingTests", dependencies: ["SleepStaging", "TestKit"]),
        // The fleet: a real three-node ejabberd cluster, PostgreSQL, the archive (docs/fleet.md).
        .testTarget(name: "FleetTests", dependencies: ["Archive", "Agent", "Bus", "TestKit"]),
    ],
    swiftLanguageModes: [.v6]
)
