import Foundation
import SensorBridge
import Supervision
import Synchronization

/// What every heart-rate transport needs: a bounded handoff of its events to the heart-rate
/// service, a thread that finishes the events when its loop returns, a stop flag the loop
/// polls, a reacquire flag, and a pause that can be cut short and reports the thread alive
/// (`.idle`) every second for the watchdog.
///
/// Backpressure lives here: `deliver` waits while `capacity` events are queued, so a reader that
/// is ahead of the writer stops reading and the bridge behind it waits (a pipe, a tty, the
/// broker through TCP) instead of anything being dropped.
final class TransportThread: Sendable {
    /// Lines queued for the heart-rate service at most; a reader waits beyond that.
    static let defaultCapacity = 1000

    private let handoff: BoundedHandoff<HeartRateTransportEvent>
    private let maxLineBytes: Int
    var events: BoundedHandoff<HeartRateTransportEvent>.Events { handoff.events }
    private struct State {
        var reacquireRequested = false
        var thread: OwnedThread?
    }
    private let state = Mutex(State())

    init(maxLineBytes: Int, capacity: Int = TransportThread.defaultCapacity) {
        self.maxLineBytes = maxLineBytes
        handoff = BoundedHandoff(capacity: capacity) { $0.weight }
    }

    private func parsed(_ lines: [[UInt8]]) -> HeartRateTransportEvent {
        .messages(lines.map { BridgeMessage.parse($0, maxBytes: maxLineBytes, forwarded: BridgeFedKinds.forwarded) })
    }

    var capacity: Int { handoff.capacity }

    /// Lines waiting for the heart-rate service now.
    var queued: Int { handoff.count }

    /// Runs `loop` on a new thread named `name`; the events end when it returns.
    func start(name: String, _ loop: @escaping @Sendable () -> Void) {
        let thread = OwnedThread(name: name)
        state.withLock { $0.thread = thread }
        thread.start { [self] in
            loop()
            handoff.finish()
        }
    }

    /// Ends the events without a thread (a transport fed from elsewhere, see `MQTTBridgeSource`).
    func finish() { handoff.finish() }

    private var owned: OwnedThread? { state.withLock { $0.thread } }

    var shouldStop: Bool { owned?.shouldStop ?? false }

    func requestStop() { owned?.requestStop() }

    /// Waits up to `seconds` for the loop to return.
    func waitUntilFinished(seconds: Double) { owned?.join(timeout: seconds) }

    func requestReacquire() { state.withLock { $0.reacquireRequested = true } }

    /// Whether a reacquire was asked for since the last call; clears the request.
    func takeReacquireRequest() -> Bool {
        state.withLock { state in
            defer { state.reacquireRequested = false }
            return state.reacquireRequested
        }
    }

    /// Hands `event` to the heart-rate service, waiting for room as long as it takes: the reader
    /// stops reading meanwhile. Once the transport is stopping it no longer waits: the service
    /// takes what was read before it ends.
    func deliver(_ event: HeartRateTransportEvent) {
        if !handoff.deliver(event, keepWaiting: { !shouldStop }) { handoff.force(event) }
    }

    /// Parses `lines` here, on the reader's thread, and delivers them (waiting as `deliver` does).
    func deliver(lines: [[UInt8]]) {
        guard !lines.isEmpty else { return }
        deliver(parsed(lines))
    }

    /// For a producer that must not wait long (the MQTT network thread also carries the agent's
    /// own publishing and queries): waits at most `seconds` for room, then takes the event anyway
    /// while fewer than `hardLimit` are queued. False when it was not taken: memory is at its bound.
    func deliver(lines: [[UInt8]], waitingAtMost seconds: Double, hardLimit: Int) -> Bool {
        deliver(parsed(lines), waitingAtMost: seconds, hardLimit: hardLimit)
    }

    func deliver(_ event: HeartRateTransportEvent, waitingAtMost seconds: Double, hardLimit: Int) -> Bool {
        if handoff.deliver(event, waitingAtMost: seconds) { return true }
        guard handoff.count < hardLimit else { return false }
        handoff.force(event)
        return true
    }

    /// Hands over all of `lines` if there is room now, else none; never waits (UDP).
    func offer(lines: [[UInt8]]) -> Bool { lines.isEmpty || handoff.offer([parsed(lines)]) }

    /// Reports the thread alive; skipped while the queue is full (the service is busy anyway).
    func idle() { _ = handoff.offer([.idle]) }

    /// Waits `seconds` unless asked to stop, reporting `.idle` every second.
    func pause(seconds: Double) { owned?.pause(seconds: seconds) { idle() } }
}
