import Foundation
import Supervision

/// Hands events from a thread that reads an input to the task that consumes them, holding at
/// most `capacity` at a time, each event weighing what `weight` says (a batch of lines weighs
/// its line count). This is where backpressure starts: a reader that is ahead of the
/// consumer waits here (`deliver`) and stops reading, so the pipe, the tty or the TCP socket
/// behind it fills and the sender waits too. A reader that must not wait (gpsd drops slow
/// clients; UDP cannot push back) uses `offer` and counts what did not fit.
///
/// The consumer iterates `events`; taking an event frees its place.
final class BoundedHandoff<Event: Sendable>: Sendable {
    let capacity: Int
    let events: Events
    private let continuation: AsyncStream<Event>.Continuation
    /// What is queued, owned by the producers' and the consumer's shared condition.
    private let ledger: MonotonicCondition<Ledger>
    private let weight: @Sendable (Event) -> Int

    fileprivate struct Ledger: Sendable {
        /// The weight of what waits for the consumer.
        var queued = 0
        /// Producers waiting for room: the consumer signals only when there are any.
        var waitingProducers = 0
    }

    init(capacity: Int, weight: @escaping @Sendable (Event) -> Int = { _ in 1 }) {
        self.capacity = max(1, capacity)
        self.weight = weight
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        let ledger = MonotonicCondition(Ledger())
        self.ledger = ledger
        events = Events(stream: stream, ledger: ledger, weight: weight)
    }

    /// The weight of what waits for the consumer now.
    var count: Int { ledger.withLock { $0.state.queued } }

    /// Waits for room as long as `keepWaiting()` holds (asked every 250 ms); false when it gave
    /// up and the event was not handed over.
    func deliver(_ event: Event, keepWaiting: () -> Bool) -> Bool {
        guard reserve(weight(event), until: nil, keepWaiting: keepWaiting) else { return false }
        continuation.yield(event)
        return true
    }

    /// Waits at most `seconds` for room; false when there was none by then (nothing handed over).
    func deliver(_ event: Event, waitingAtMost seconds: Double) -> Bool {
        guard reserve(weight(event), until: ContinuousClock.now + .seconds(seconds), keepWaiting: { true }) else { return false }
        continuation.yield(event)
        return true
    }

    /// Hands over all of `batch` if there is room for all of it now, else none; never waits.
    func offer(_ batch: [Event]) -> Bool {
        guard !batch.isEmpty else { return true }
        let total = batch.reduce(0) { $0 + weight($1) }
        let room = ledger.withLock { locked in
            guard locked.state.queued + total <= capacity else { return false }
            locked.state.queued += total
            return true
        }
        guard room else { return false }
        for event in batch { continuation.yield(event) }
        return true
    }

    /// Hands over `event` whether or not there is room (rare events: a state change).
    func force(_ event: Event) {
        let places = weight(event)
        ledger.withLock { $0.state.queued += places }
        continuation.yield(event)
    }

    /// No more events: the consumer's loop ends once it has taken the ones handed over.
    func finish() { continuation.finish() }

    /// Waits until `places` fit (or, for an event heavier than the whole capacity, until the
    /// queue is empty).
    private func reserve(_ places: Int, until deadline: ContinuousClock.Instant?, keepWaiting: () -> Bool) -> Bool {
        ledger.withLock { locked in
            while locked.state.queued + places > capacity && locked.state.queued > 0 {
                let now = ContinuousClock.now
                if let deadline, now >= deadline { return false }
                locked.state.waitingProducers += 1
                locked.wait(timeout: deadline.map { min($0 - now, .milliseconds(250)) } ?? .milliseconds(250))
                locked.state.waitingProducers -= 1
                if locked.state.queued + places > capacity && locked.state.queued > 0, !keepWaiting() { return false }
            }
            locked.state.queued += places
            return true
        }
    }

    /// The consumer's side: an async sequence whose every `next()` frees one place.
    struct Events: AsyncSequence, Sendable {
        fileprivate let stream: AsyncStream<Event>
        fileprivate let ledger: MonotonicCondition<Ledger>
        fileprivate let weight: @Sendable (Event) -> Int

        struct AsyncIterator: AsyncIteratorProtocol {
            fileprivate var base: AsyncStream<Event>.AsyncIterator
            fileprivate let ledger: MonotonicCondition<Ledger>
            fileprivate let weight: @Sendable (Event) -> Int

            mutating func next() async -> Event? {
                let event = await base.next()
                if let event { took(event) }
                return event
            }

            /// Frees the event's places and wakes a producer waiting for room.
            private func took(_ event: Event) {
                let places = weight(event)
                ledger.withLock { locked in
                    locked.state.queued -= places
                    if locked.state.waitingProducers > 0 { ledger.signal() }
                }
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: stream.makeAsyncIterator(), ledger: ledger, weight: weight)
        }
    }
}
