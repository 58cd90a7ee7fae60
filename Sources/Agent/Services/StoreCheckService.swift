import Foundation
import Logging
import ServiceLifecycle
import Store
import Synchronization

/// Checks the whole store file in the background when it was too large to check at start
/// (`Store.needsFullCheck`): a year of 1 Hz data is gigabytes, minutes of reading on an SD card.
///
/// Found damage is recorded next to the file and the agent shuts down cleanly with
/// `StoreDamagedError` (exit 75, EX_TEMPFAIL); systemd starts it again, and that start moves the
/// damaged file aside (kept) and begins a new one, as for damage found at start. The check runs
/// on a thread of its own: it would otherwise hold one of Swift's few task threads for minutes.
struct StoreCheckService: Service, CustomStringConvertible {
    let store: Store
    var startAfter: Duration = .seconds(60)
    let logger: Logger

    var description: String { "StoreCheckService" }

    func run() async throws {
        // Returning would end the group: this service waits for shutdown like the others.
        guard store.needsFullCheck, await sleepUnlessShuttingDown(for: startAfter) else {
            try? await gracefulShutdown()
            return
        }
        let path = store.path
        let started = ContinuousClock.now
        let run = CheckRun()
        let finding = try await withTaskCancellationOrGracefulShutdownHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard run.start(continuation) else { return }
                let thread = Thread {
                    run.finish(Result { try Store.fullCheck(path: path) { run.opened($0) } })
                }
                thread.name = "store-check"
                thread.start()
            }
        } onCancelOrGracefulShutdown: {
            run.stop()
        }
        if let finding {
            logger.critical(
                "the store file is damaged; restarting to move it aside and start a new one",
                metadata: ["path": "\(path)", "finding": "\(finding.prefix(500))"])
            try Store.markDamaged(path: path, finding: finding)
            throw StoreDamagedError(finding: finding)
        }
        if !run.wasStopped {
            logger.info("store checked whole: intact", metadata: ["seconds": "\((ContinuousClock.now - started).components.seconds)"])
        }
        try? await gracefulShutdown()
    }
}

/// The background check found the store damaged; `keepalive run` exits 75 (EX_TEMPFAIL).
struct StoreDamagedError: Error, CustomStringConvertible {
    let finding: String
    var description: String { "the store file is damaged: \(finding.prefix(200))" }
}

/// One background check: its continuation is resumed once, by the check's thread or by a
/// shutdown (which also interrupts the check, so the process need not wait minutes for it).
private final class CheckRun: Sendable {
    private struct State {
        var continuation: CheckedContinuation<String?, any Error>?
        var running: CheckInterrupter?
        var stopped = false
    }
    private let state = Mutex(State())

    var wasStopped: Bool { state.withLock { $0.stopped } }

    /// False when already stopped: the continuation is resumed at once and nothing starts.
    func start(_ continuation: CheckedContinuation<String?, any Error>) -> Bool {
        let proceed = state.withLock {
            if !$0.stopped { $0.continuation = continuation }
            return !$0.stopped
        }
        if !proceed { continuation.resume(returning: nil) }
        return proceed
    }

    func opened(_ connection: SQLiteConnection) {
        let running = CheckInterrupter(connection)
        state.withLock {
            $0.running = running
            if $0.stopped { running.interrupt() }
        }
    }

    func finish(_ result: Result<String?, any Error>) {
        let waiting = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume(with: result)
    }

    func stop() {
        let running = state.withLock {
            $0.stopped = true
            return $0.running
        }
        running?.interrupt()
        finish(.success(nil))
    }
}

/// The check's connection as seen from the shutdown's thread: it can only be interrupted.
///
/// Unchecked `Sendable`, and safe: the only call made through it is `sqlite3_interrupt`, which
/// SQLite documents as safe to call from another thread while the connection runs a statement
/// (https://sqlite.org/c3ref/interrupt.html); the check's own thread does everything else.
private final class CheckInterrupter: @unchecked Sendable {
    private let connection: SQLiteConnection
    init(_ connection: SQLiteConnection) { self.connection = connection }
    func interrupt() { connection.interrupt() }
}
