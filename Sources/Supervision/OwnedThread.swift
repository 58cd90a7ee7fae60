import Foundation

/// A thread the agent owns and runs a blocking loop on (the GPS reader, a heart-rate transport,
/// the MQTT network loop): started once, asked to stop, woken from its pauses at once when
/// asked, and joined with a bound. The loop polls `shouldStop`; every wait goes through `pause`,
/// so a stop never waits out a backoff.
public final class OwnedThread: @unchecked Sendable {
    public let name: String
    private let wakeUp = MonotonicCondition()
    private var stopRequested = false
    private var started = false
    private let finished = DispatchSemaphore(value: 0)

    public init(name: String) { self.name = name }

    /// Runs `loop` on a new thread; `loop` returns when it sees `shouldStop` (or has nothing
    /// more to do). Call once.
    public func start(_ loop: @escaping @Sendable () -> Void) {
        wakeUp.withLock {
            precondition(!started, "OwnedThread \(name) started twice")
            started = true
        }
        let thread = Thread { [self] in
            loop()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    public var shouldStop: Bool { wakeUp.withLock { stopRequested } }

    /// Asks the loop to return, cutting short any `pause` under way.
    public func requestStop() {
        wakeUp.withLock {
            stopRequested = true
            wakeUp.broadcast()
        }
    }

    /// Waits up to `seconds` for the loop to return; false when it did not (or never started).
    @discardableResult
    public func join(timeout seconds: Double) -> Bool {
        guard wakeUp.withLock({ started }) else { return false }
        return finished.wait(timeout: .now() + seconds) == .success
    }

    /// Waits `seconds` unless asked to stop, calling `tick` every `interval` meanwhile (a
    /// heartbeat: the thread is alive even while it waits). Measured on the monotonic clock: a
    /// step of the wall clock neither cuts a pause short nor stretches it.
    public func pause(seconds: Double, tickEvery interval: Double = 1, _ tick: () -> Void = {}) {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(max(seconds, 0))
        wakeUp.lock()
        while !stopRequested && clock.now < deadline {
            wakeUp.wait(timeout: min(deadline - clock.now, .seconds(interval)))
            if stopRequested { break }
            wakeUp.unlock()
            tick()
            wakeUp.lock()
        }
        wakeUp.unlock()
    }
}
