import Foundation

/// What every thread-based heart-rate transport needs: the event stream, a thread that finishes
/// the stream when its loop returns, a stop flag the loop polls, a reacquire flag, and a pause
/// that can be cut short and reports the thread alive (`.idle`) every second for the watchdog.
final class TransportThread: @unchecked Sendable {
    let events: AsyncStream<HeartRateTransportEvent>
    let sink: AsyncStream<HeartRateTransportEvent>.Continuation
    private let lock = NSLock()
    private var stopRequested = false
    private var reacquireRequested = false
    private let finished = DispatchSemaphore(value: 0)

    init() {
        (events, sink) = AsyncStream.makeStream(of: HeartRateTransportEvent.self, bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Runs `loop` on a new thread named `name`; the event stream ends when it returns.
    func start(name: String, _ loop: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            loop()
            sink.finish()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    var shouldStop: Bool { lock.withLock { stopRequested } }

    func requestStop() { lock.withLock { stopRequested = true } }

    /// Waits up to `seconds` for the loop to return.
    func waitUntilFinished(seconds: Double) { _ = finished.wait(timeout: .now() + seconds) }

    func requestReacquire() { lock.withLock { reacquireRequested = true } }

    /// Whether a reacquire was asked for since the last call; clears the request.
    func takeReacquireRequest() -> Bool {
        lock.withLock {
            defer { reacquireRequested = false }
            return reacquireRequested
        }
    }

    /// Waits `seconds` unless asked to stop, reporting `.idle` every second.
    func pause(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        var lastIdle = Date()
        while !shouldStop && Date() < deadline {
            usleep(50_000)
            if Date().timeIntervalSince(lastIdle) >= 1 {
                sink.yield(.idle)
                lastIdle = Date()
            }
        }
    }
}
