import Foundation
import Synchronization

/// gpsd fed by gpsfake from a receiver capture, on a free port.
///
/// gpsfake runs its own gpsd; it is stopped with SIGTERM (a SIGKILL would orphan that gpsd).
public final class GPSFake: Sendable {
    public let port: Int
    public let process: ManagedProcess
    private let directory: TemporaryDirectory
    private let stopped = Mutex(false)

    /// `cycle`: seconds between sentences. `once`: play the log once (then gpsd stays up for
    /// `linger` seconds with no data) instead of looping it.
    public init(capture: String, port: Int = Ports.free(), cycle: Double = 0.1, once: Bool = false, linger: Int = 2) async throws {
        self.port = port
        directory = try TemporaryDirectory("gpsfake")
        var arguments = ["-P", "\(port)", "-q", "-c", "\(cycle)"]
        if once { arguments += ["-1", "-W", "\(linger)"] }
        arguments.append(capture)
        process = try ManagedProcess(
            name: "gpsfake:\(port)", executable: Tools.gpsfake, arguments: arguments, environment: ["TMPDIR": directory.path])
        try await Wait.until(timeout: 60, "gpsd (gpsfake) to listen on \(port): \(process.text)") {
            Ports.isListening(port) || !process.isRunning
        }
        if !process.isRunning { throw WaitTimeout(description: "gpsfake exited: \(process.text)") }
        try await ensureItsDevice()
    }

    /// Returns once the gpsd on `port` is gpsfake's own and lists gpsfake's device.
    ///
    /// gpsfake adds its pseudo-terminal to gpsd through the control socket once the socket's file
    /// exists, and gives up without a word if the connect is refused (gpsd between its bind and
    /// listen). That gpsd then serves clients with no device, and an agent started against it
    /// waits for a fix that never comes. So: ask gpsd, as a client would, and add the device the
    /// way gpsfake meant to if it is missing.
    private func ensureItsDevice() async throws {
        let listening = Set(Self.pids(listeningOn: port))
        let ours = Set(Self.children(of: process.pid, named: "gpsd"))
        if !listening.isEmpty, !ours.isEmpty, listening.isDisjoint(with: ours) {
            throw WaitTimeout(description: "port \(port) is served by pid \(listening.sorted()), not by gpsfake's gpsd \(ours.sorted())")
        }
        let controlSocket = "\(directory.path)/gpsfake-\(process.pid).sock"
        var added = false
        let started = ContinuousClock.now
        try await Wait.until(timeout: 20, "gpsfake's gpsd on \(port) to list a device: \(process.text)") {
            if let paths = GPSDProbe.devicePaths(port: port), !paths.isEmpty { return true }
            if !added, ContinuousClock.now - started > .seconds(3), let pty = GPSDProbe.fakePTY(ofGPSFake: process.pid) {
                added = GPSDProbe.add(device: pty, controlSocket: controlSocket)
                FileHandle.standardError.write(Data("gpsfake:\(port) had not added \(pty) to its gpsd; added it: \(added)\n".utf8))
            }
            return false
        } refresh: {
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Stops gpsfake and its gpsd, and returns once the port is free again.
    public func stop() {
        // Once only: a later call (deinit) must not kill a new gpsd that took over the port.
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        process.stop(signal: SIGTERM, timeout: 10)
        // gpsfake's gpsd: whoever still listens on our port after gpsfake exits.
        let leftovers = Self.pids(listeningOn: port)
        for pid in leftovers { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(5)
        while Ports.isListening(port) && Date() < deadline { usleep(20_000) }
        if Ports.isListening(port) { for pid in Self.pids(listeningOn: port) { kill(pid, SIGKILL) } }
    }

    deinit { stop() }

    /// The gpsd serving this port (gpsfake's child), for tests that kill it: the process with a
    /// socket listening on the port, else gpsfake's child named gpsd.
    public func processPIDsListening() -> [pid_t] {
        let listening = Self.pids(listeningOn: port)
        return listening.isEmpty ? Self.children(of: process.pid, named: "gpsd") : listening
    }

    /// Processes whose parent is `parent` and whose command is `name` (from /proc/*/stat).
    static func children(of parent: pid_t, named name: String) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return nil }
            let command = stat[stat.index(after: open)..<close]
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard command == name, fields.count > 1, pid_t(fields[1]) == parent else { return nil }
            return pid
        }
    }

    /// PIDs of processes with a TCP socket listening on `port` (from /proc/net/tcp and tcp6 and
    /// fds: gpsd binds localhost on both families, and may hold only the IPv6 one).
    static func pids(listeningOn port: Int) -> [pid_t] {
        let hexPort = String(format: ":%04X", port)
        var inodes = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[1].hasSuffix(hexPort), fields[3] == "0A" else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        guard !inodes.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var result: [pid_t] = []
        for entry in entries {
            guard let pid = pid_t(entry), let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd") else { continue }
            for fd in fds {
                if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)"),
                   link.hasPrefix("socket:["), inodes.contains(String(link.dropFirst(8).dropLast())) {
                    result.append(pid)
                    break
                }
            }
        }
        return result
    }
}
