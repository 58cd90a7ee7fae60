import Foundation

/// Where the programs the tests drive live.
public enum Tools {
    public static let mosquitto = find("mosquitto", in: ["/usr/sbin", "/usr/bin"])
    public static let mosquittoSub = find("mosquitto_sub")
    public static let mosquittoPub = find("mosquitto_pub")
    public static let mosquittoRR = find("mosquitto_rr")
    public static let gpsfake = find("gpsfake")
    public static let gpsd = find("gpsd", in: ["/usr/sbin", "/usr/bin"])
    public static let stdbuf = find("stdbuf")

    /// The package root (this file is Tests/TestKit/Tools.swift).
    public static let packageRoot: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The `keepalive` binary under test: $KEEPALIVE_BIN, else the debug build of this package.
    public static var agent: String {
        if let path = ProcessInfo.processInfo.environment["KEEPALIVE_BIN"], !path.isEmpty { return path }
        return "\(packageRoot)/.build/debug/keepalive"
    }

    /// A file committed under Tests/Fixtures.
    public static func fixture(_ relativePath: String) -> String { "\(packageRoot)/Tests/Fixtures/\(relativePath)" }

    public static func find(_ name: String, in extra: [String] = []) -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in path + extra + ["/usr/local/bin", "/usr/bin", "/usr/sbin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return name
    }
}
