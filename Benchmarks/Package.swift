// swift-tools-version:6.0
import PackageDescription

// The benchmarks, apart from the agent's package as swift-nio keeps its own: building or testing
// the agent never builds them (nor GRDB, which only the ingest baseline needs). scripts/bench.sh
// runs them; docs/testing.md says what each one measures.
let package = Package(
    name: "keepalive-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "keepalive", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only for the baseline that compares it with the store's own sqlite3 wrapper.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // `keepalive-bench`: figures as ratios against baselines run alongside.
        .executableTarget(
            name: "keepalive-bench",
            dependencies: [
                .product(name: "KeepAliveAgent", package: "keepalive"), .product(name: "KeepAliveStore", package: "keepalive"),
                .product(name: "KeepAliveBus", package: "keepalive"), .product(name: "KeepAliveTestKit", package: "keepalive"),
                .product(name: "Logging", package: "swift-log"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/Bench"),
        // The steady-state benchmark's memory baseline: only Foundation and a time zone (see its main.swift).
        .executableTarget(name: "keepalive-rss-floor", path: "Sources/RSSFloor"),
        // `keepalive-sleep-bench`: CPU of classifying a night, next to the real sleepecg on the same night.
        .executableTarget(
            name: "keepalive-sleep-bench", dependencies: [.product(name: "SleepStaging", package: "keepalive")],
            path: "Sources/SleepBench"),
    ],
    swiftLanguageModes: [.v6]
)
