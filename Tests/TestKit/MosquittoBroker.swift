import Foundation
import Synchronization

/// A real mosquitto on a free loopback port, for one test. Runs as root without dropping
/// privileges (`user root`), with no persistence unless asked.
public final class MosquittoBroker: Sendable {
    public let port: Int
    public let directory: TemporaryDirectory
    private let extraConfig: String
    private let persistence: Bool
    private let running = Mutex<ManagedProcess?>(nil)
    public var process: ManagedProcess? { running.withLock { $0 } }

    /// `extraConfig` is appended to the listener block (TLS files, password_file …).
    public init(port: Int = Ports.free(), persistence: Bool = false, extraConfig: String = "") throws {
        self.port = port
        self.persistence = persistence
        self.extraConfig = extraConfig
        directory = try TemporaryDirectory("mosquitto")
        try start()
    }

    /// Starts (or restarts, on the same port) and waits until it accepts connections.
    public func start() throws {
        let config = """
            listener \(port) 127.0.0.1
            allow_anonymous \(extraConfig.contains("password_file") ? "false" : "true")
            persistence \(persistence)
            persistence_location \(directory.path)/
            user root
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            log_type subscribe
            \(extraConfig)
            """
        let configPath = try directory.write("mosquitto.conf", config)
        let process = try ManagedProcess(name: "mosquitto:\(port)", executable: Tools.mosquitto, arguments: ["-c", configPath])
        running.withLock { $0 = process }
        let deadline = Date().addingTimeInterval(10)
        // Listening by this process, not another's on the same port: a restart on a port whose
        // last instance is still going away must not pass for started.
        while !(Ports.isListening(port) && process.text.contains("running")) {
            guard process.isRunning, Date() < deadline else {
                throw WaitTimeout(description: "mosquitto did not listen on \(port): \(process.text)")
            }
            usleep(20_000)
        }
    }

    /// What this broker logged (connections, subscriptions), for a failure message.
    public var log: String { process?.text ?? "" }

    /// Waits until a client has subscribed to `filter`: mosquitto logs `<client> <qos> <filter>`
    /// for each subscription (`log_type subscribe`). A message published after that reaches the
    /// client, so a test publishes once instead of again until it is seen.
    public func waitForSubscription(to filter: String, timeout: Double = 20) async throws {
        try await Wait.until(timeout: timeout, "a subscription to \(filter) at the broker on \(port); its log:\n\((process?.text ?? "").suffix(1000))") {
            (process?.text ?? "").split(separator: "\n").contains { line in
                let parts = line.split(separator: " ")
                return parts.count == 4 && parts[3] == filter && Int(parts[2]) != nil
            }
        }
    }

    /// Stops it by PID (SIGTERM: with persistence on, it saves its state).
    public func stop() {
        running.withLock { $0 }?.stop()
        running.withLock { $0 = nil }
    }

    deinit { stop() }
}
