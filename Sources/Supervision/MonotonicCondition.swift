#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex and condition variable whose timed waits run on CLOCK_MONOTONIC, guarding a `State`
/// the way `Synchronization.Mutex` guards its value: the state is reached only inside
/// `withLock`, so the compiler sees who owns it.
///
/// Foundation's `NSCondition.wait(until:)` takes a wall-clock `Date`: when chrony or NTP steps
/// a Pi's clock back by hours at boot, a wait that should last 250 ms lasts hours. This one
/// measures its timeouts on the monotonic clock, which no clock step moves (issue 33). A
/// `Mutex` has no condition variable to wait on, hence the pthread pair.
///
/// Unchecked `Sendable`, and safe: `state` is read and written only with `mutex` held (inside
/// `withLock`, through `Locked`, which a body must not keep); the pthread objects live at
/// fixed heap addresses for the object's life and are used only through the pthread calls,
/// which do their own synchronisation; `State` is `Sendable`, so nothing read out of it is
/// shared unguarded.
public final class MonotonicCondition<State: Sendable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    @usableFromInline var state: State

    public init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if os(Linux)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the lock held; `body` reaches the state, and waits, through `Locked`.
    @inlinable
    public func withLock<T>(_ body: (Locked) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(Locked(owner: self))
    }

    /// Wakes one waiter (with or without the lock held).
    public func signal() { pthread_cond_signal(condition) }
    /// Wakes every waiter (with or without the lock held).
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// The state and the waits, valid only inside the `withLock` body that received it. Each
    /// access to `state` reads the object anew: after a `wait` it sees what other threads wrote.
    public struct Locked {
        @usableFromInline let owner: MonotonicCondition

        @usableFromInline init(owner: MonotonicCondition) { self.owner = owner }

        @inlinable
        public var state: State {
            get { owner.state }
            nonmutating _modify { yield &owner.state }
        }

        /// Waits until signalled or `timeout` has passed (or spuriously, as any condition
        /// variable may), the lock released meanwhile; true when it was not the timeout that
        /// ended the wait.
        @discardableResult
        public func wait(timeout: Duration) -> Bool { owner.wait(timeout: timeout) }
    }

    private func wait(timeout: Duration) -> Bool {
        var deadline = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        #else
        clock_gettime(CLOCK_REALTIME, &deadline)
        #endif
        let (seconds, attoseconds) = max(timeout, .zero).components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
    }
}
