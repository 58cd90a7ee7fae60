import Foundation
import Synchronization

/// The built `keepalive` binary running `run` against a generated configuration.
public final class AgentProcess: Sendable {
    public let directory: TemporaryDirectory
    public let configPath: String
    public let storePath: String
    public let deviceID: String
    private let running = Mutex<ManagedProcess?>(nil)
    public var process: ManagedProcess? { running.withLock { $0 } }

    /// `config` is TOML appended after the generated `[device]`, `[mqtt]` and `[store]` basics;
    /// sections it names again replace nothing, so pass whole extra sections only.
    public let environment: [String: String]

    /// `environment` is added to the agent's (e.g. `KEEPALIVE_CLOCK_SYNCHRONISED`).
    ///
    /// `foldS` is `[store] fold_s`: 1 by default, because most tests read the store file from
    /// outside the agent while it runs and wait for rows in the tables; the tests of wear, of
    /// queries' freshness and of crashes pass the product's 60.
    public init(brokerPort: Int, deviceID: String = "testpi", timeZone: String = "UTC", gpsPort: Int? = nil, gpsFixTimeout: Double = 5,
                extraConfig: String = "", store: String? = nil, directory: TemporaryDirectory? = nil,
                environment: [String: String] = [:], foldS: Int = 1, start: Bool = true) throws {
        self.environment = environment
        self.directory = try directory ?? TemporaryDirectory("agent")
        self.deviceID = deviceID
        storePath = store ?? self.directory.file("keepalive.db")
        let gps = gpsPort.map { "[gps]\nport = \($0)\nfix_timeout_s = \(gpsFixTimeout)\nreconnect_max_s = 1\n" }
            ?? "[gps]\nenabled = false\n"
        configPath = try self.directory.write("config.toml", """
            [device]
            id = "\(deviceID)"
            timezone = "\(timeZone)"
            [mqtt]
            port = \(brokerPort)
            reconnect_min_s = 0.2
            reconnect_max_s = 1
            [store]
            path = "\(storePath)"
            fold_s = \(foldS)
            \(gps)
            \(extraConfig)
            """)
        if start { try self.start() }
    }

    /// Adds lines at the top of a section of the generated config (before `start()`).
    public func addToConfig(section: String, lines: [String]) throws {
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        try text.replacingOccurrences(of: "[\(section)]\n", with: "[\(section)]\n" + lines.joined(separator: "\n") + "\n")
            .write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    public func start() throws {
        let process = try ManagedProcess(
            name: "keepalive", executable: Tools.agent, arguments: ["run", "--config", configPath, "--log-level", "debug"],
            environment: environment)
        running.withLock { $0 = process }
    }

    /// Clean stop (SIGTERM); returns the exit status.
    @discardableResult
    public func stop() -> Int32? {
        defer { running.withLock { $0 = nil } }
        return process?.stop(signal: SIGTERM, timeout: 15)
    }

    public func kill9() {
        process?.kill9()
        running.withLock { $0 = nil }
    }

    public var log: String { process?.text ?? "" }

    /// `keepalive query <arguments>` on this agent's store (it may run meanwhile): the reply it
    /// printed, as JSON (stdout only; logs go to stderr).
    public func queryReply(_ arguments: [String]) async throws -> [String: Any]? {
        let out = directory.file("query-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let query = try ManagedProcess(
            name: "keepalive query", executable: "/bin/sh",
            arguments: ["-c", "exec \"$0\" \"$@\" >\(out)", Tools.agent, "query"] + arguments + ["--config", configPath])
        _ = await query.waitForExit(timeout: 60)
        return try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
    }

    /// The day's `valid_samples` once it reaches `expected` (the final aggregate is republished
    /// as a backlog lands), or the last value seen after `attempts` queries a second apart.
    public func validSamples(on day: String, expected: Int, attempts: Int = 30) async throws -> Int? {
        var value: Int?
        for attempt in 1...attempts {
            value = BridgeBacklog.validSamples(try await queryReply([day]))
            if value == expected || attempt == attempts { break }
            try await Task.sleep(for: .seconds(1))
        }
        return value
    }

    deinit { _ = stop() }
}
