#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex and condition variable whose timed waits run on CLOCK_MONOTONIC.
///
/// Foundation's `NSCondition.wait(until:)` takes a wall-clock `Date`: when chrony or NTP steps
/// a Pi's clock back by hours at boot, a wait that should last 250 ms lasts hours. This one
/// measures its timeouts on the monotonic clock, which no clock step moves.
public final class MonotonicCondition: @unchecked Sendable {
    // Safe: the pthread objects live at fixed heap addresses for the object's life and are only
    // used through the pthread calls, which do their own synchronisation.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
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

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// With the lock held: waits until signalled or `timeout` has passed (or spuriously, as any
    /// condition variable may); true when it was not the timeout that ended the wait.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
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
