import Foundation
import Synchronization

/// A child process a test started: its output collected line by line, stopped by PID when the
/// test is done (SIGTERM, then SIGKILL after a bounded wait) — and at exit of the test process
/// for any a failing test left behind.
public final class ManagedProcess: Sendable {
    public let name: String
    public let pid: pid_t
    private let output = LineBuffer()
    /// The wait status once reaped.
    private let status = Mutex<Int32?>(nil)
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `executable` with `arguments`; stdout and stderr are both collected.
    ///
    /// Every signal at its default disposition and unblocked (a child spawned from a test thread
    /// would otherwise inherit its blocked signals and ignore SIGTERM), and tied to this process:
    /// it is SIGKILLed if the test run dies without stopping it (see `Spawner`).
    public init(name: String, executable: String, arguments: [String], environment: [String: String]? = nil) throws {
        self.name = name
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw POSIXError(.EMFILE) }
        let environment = ProcessInfo.processInfo.environment.merging(environment ?? [:]) { $1 }
        let child: pid_t
        do {
            child = try Spawner.shared.spawn(
                path: executable, argv: [executable] + arguments, envp: environment.map { "\($0.key)=\($0.value)" }, outputFD: pipeFDs[1])
            close(pipeFDs[1])
        } catch {
            close(pipeFDs[0])
            close(pipeFDs[1])
            throw error
        }
        pid = child
        ProcessRegistry.shared.add(child)

        let readFD = pipeFDs[0]
        let buffer = output
        let reader = Thread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(readFD, &chunk, chunk.count)
                if count <= 0 { break }
                buffer.append(Data(chunk[0..<count]))
            }
            buffer.markClosed()
            close(readFD)
        }
        reader.start()
        let spawned = child
        let reaper = Thread { [self] in
            var waitStatus: Int32 = 0
            while waitpid(spawned, &waitStatus, 0) == -1 && errno == EINTR {}
            status.withLock { $0 = waitStatus }
            ProcessRegistry.shared.remove(spawned)
            exited.signal()
        }
        reaper.start()
    }

    public var isRunning: Bool { status.withLock { $0 == nil } }

    /// The exit code, or 128 + signal number for a process killed by a signal; nil while running.
    public var exitStatus: Int32? {
        status.withLock { status in
            guard let status else { return nil }
            let signal = status & 0x7F
            return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        }
    }

    /// Everything printed so far.
    public var lines: [String] { output.lines }
    public var text: String { output.lines.joined(separator: "\n") }

    /// Waits for a line containing `needle`; returns it, or throws with what was printed.
    @discardableResult
    public func waitForLine(containing needle: String, timeout: Double = 10) async throws -> String {
        var found: String?
        try await Wait.until(timeout: timeout, "\(name) to print \"\(needle)\"; it printed:\n\(text.suffix(3000))") {
            found = self.lines.first { $0.contains(needle) }
            return found != nil
        }
        return found ?? ""
    }

    /// Waits until at least `count` lines contain one of `needles` (a retried failure, say).
    public func waitForLines(containingAny needles: [String], count: Int, timeout: Double = 20) async throws {
        try await Wait.until(timeout: timeout, "\(name) to print \(count) lines with \(needles); it printed:\n\(text.suffix(1500))") {
            self.lines.filter { line in needles.contains { line.contains($0) } }.count >= count
        }
    }

    /// Sends `signal` (SIGTERM by default) and waits up to `timeout` for the exit; then SIGKILL.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 10) -> Int32? {
        if isRunning {
            kill(pid, signal)
            if exited.wait(timeout: .now() + timeout) == .timedOut {
                kill(pid, SIGKILL)
                exited.wait()
            }
            exited.signal()
        }
        return exitStatus
    }

    /// SIGKILL, as a power cut or the OOM killer would.
    public func kill9() {
        if isRunning {
            kill(pid, SIGKILL)
            exited.wait()
            exited.signal()
        }
    }

    /// Waits for the process to exit on its own; nil if it is still running after `timeout`.
    public func waitForExit(timeout: Double) async -> Int32? {
        try? await Wait.until(timeout: timeout, "\(name) to exit") { !self.isRunning }
        // Its output may still be in the pipe: read to the end (a child it left behind may hold
        // the pipe open, hence the bound).
        if !isRunning { try? await Wait.until(timeout: 5, "\(name)'s output to end") { self.output.isClosed } }
        return exitStatus
    }

    deinit {
        if isRunning { stop(timeout: 2) }
    }
}

/// Lines of output, appended from a reader thread, read from tests.
final class LineBuffer: Sendable {
    private struct State {
        var pending = Data()
        var complete: [String] = []
        var closed = false
    }
    private let state = Mutex(State())

    func markClosed() { state.withLock { $0.closed = true } }
    var isClosed: Bool { state.withLock { $0.closed } }

    func append(_ data: Data) {
        state.withLock { state in
            state.pending.append(data)
            while let newline = state.pending.firstIndex(of: 0x0A) {
                state.complete.append(String(decoding: state.pending[state.pending.startIndex..<newline], as: UTF8.self))
                state.pending.removeSubrange(state.pending.startIndex...newline)
            }
        }
    }

    var lines: [String] {
        state.withLock { state in
            state.pending.isEmpty ? state.complete : state.complete + [String(decoding: state.pending, as: UTF8.self)]
        }
    }
}

/// Every PID a test started and has not stopped; killed when the test process exits.
final class ProcessRegistry: Sendable {
    static let shared = ProcessRegistry()
    private let pids = Mutex<Set<pid_t>>([])

    private init() {
        atexit {
            for pid in ProcessRegistry.shared.snapshot() { kill(pid, SIGKILL) }
        }
    }

    func add(_ pid: pid_t) { _ = pids.withLock { $0.insert(pid) } }
    func remove(_ pid: pid_t) { _ = pids.withLock { $0.remove(pid) } }
    func snapshot() -> Set<pid_t> { pids.withLock { $0 } }
}
