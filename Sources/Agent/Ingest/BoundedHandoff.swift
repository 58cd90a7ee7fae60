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
final class BoundedHandoff<Event: Sendable>: @unchecked Sendable {
    let capacity: Int
    let events: Events
    private let continuation: AsyncStream<Event>.Continuation
    private let condition = MonotonicCondition()
    private var queued = 0
    private var waitingProducers = 0
    private let weight: @Sendable (Event) -> Int

    init(capacity: Int, weight: @escaping @Sendable (Event) -> Int = { _ in 1 }) {
        self.capacity = max(1, capacity)
        self.weight = weight
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        events = Events(stream: stream, taken: Taken())
        events.taken.handoff = self
    }

    /// The weight of what waits for the consumer now.
    var count: Int { condition.withLock { queued } }

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
        let room = condition.withLock {
            guard queued + total <= capacity else { return false }
            queued += total
            return true
        }
        guard room else { return false }
        for event in batch { continuation.yield(event) }
        return true
    }

    /// Hands over `event` whether or not there is room (rare events: a state change).
    func force(_ event: Event) {
        let places = weight(event)
        condition.withLock { queued += places }
        continuation.yield(event)
    }

    /// No more events: the consumer's loop ends once it has taken the ones handed over.
    func finish() { continuation.finish() }

    /// Waits until `places` fit (or, for an event heavier than the whole capacity, until the
    /// queue is empty).
    private func reserve(_ places: Int, until deadline: ContinuousClock.Instant?, keepWaiting: () -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queued + places > capacity && queued > 0 {
            let now = ContinuousClock.now
            if let deadline, now >= deadline { return false }
            waitingProducers += 1
            condition.wait(timeout: deadline.map { min($0 - now, .milliseconds(250)) } ?? .milliseconds(250))
            waitingProducers -= 1
            if queued + places > capacity && queued > 0, !keepWaiting() { return false }
        }
        queued += places
        return true
    }

    fileprivate func took(_ event: Event) {
        let places = weight(event)
        condition.lock()
        queued -= places
        if waitingProducers > 0 { condition.signal() }
        condition.unlock()
    }

    /// The consumer's side: an async sequence whose every `next()` frees one place.
    struct Events: AsyncSequence, Sendable {
        fileprivate let stream: AsyncStream<Event>
        fileprivate let taken: Taken

        struct AsyncIterator: AsyncIteratorProtocol {
            fileprivate var base: AsyncStream<Event>.AsyncIterator
            fileprivate let taken: Taken

            mutating func next() async -> Event? {
                let event = await base.next()
                if let event { taken.handoff?.took(event) }
                return event
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), taken: taken) }
    }

    /// Lets the sequence reach its handoff without a retain cycle through the stream.
    fileprivate final class Taken: @unchecked Sendable {
        weak var handoff: BoundedHandoff?
    }
}
