import Foundation

/// A thread the agent owns and runs a blocking loop on (the GPS reader, a heart-rate transport,
/// the MQTT network loop): started once, asked to stop, woken from its pauses at once when
/// asked, and joined with a bound. The loop polls `shouldStop`; every wait goes through `pause`,
/// so a stop never waits out a backoff.
public final class OwnedThread: Sendable {
    public let name: String
    private struct Flags: Sendable {
        var stopRequested = false
        var started = false
    }
    /// The flags, and the condition a `pause` waits on (monotonic: see `MonotonicCondition`).
    private let wakeUp = MonotonicCondition(Flags())
    private let finished = DispatchSemaphore(value: 0)

    public init(name: String) { self.name = name }

    /// Runs `loop` on a new thread; `loop` returns when it sees `shouldStop` (or has nothing
    /// more to do). Call once.
    public func start(_ loop: @escaping @Sendable () -> Void) {
        wakeUp.withLock {
            precondition(!$0.state.started, "OwnedThread \(name) started twice")
            $0.state.started = true
        }
        let thread = Thread { [self] in
            loop()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    public var shouldStop: Bool { wakeUp.withLock { $0.state.stopRequested } }

    /// Asks the loop to return, cutting short any `pause` under way.
    public func requestStop() {
        wakeUp.withLock {
            $0.state.stopRequested = true
            wakeUp.broadcast()
        }
    }

    /// Waits up to `seconds` for the loop to return; false when it did not (or never started).
    @discardableResult
    public func join(timeout seconds: Double) -> Bool {
        guard wakeUp.withLock({ $0.state.started }) else { return false }
        return finished.wait(timeout: .now() + seconds) == .success
    }

    /// Waits `seconds` unless asked to stop, calling `tick` every `interval` meanwhile (a
    /// heartbeat: the thread is alive even while it waits), without the lock held. Measured on
    /// the monotonic clock: a step of the wall clock neither cuts a pause short nor stretches it.
    public func pause(seconds: Double, tickEvery interval: Double = 1, _ tick: () -> Void = {}) {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(max(seconds, 0))
        while true {
            let stop = wakeUp.withLock { locked -> Bool in
                if locked.state.stopRequested || clock.now >= deadline { return true }
                locked.wait(timeout: min(deadline - clock.now, .seconds(interval)))
                return locked.state.stopRequested
            }
            if stop { return }
            tick()
        }
    }
}
