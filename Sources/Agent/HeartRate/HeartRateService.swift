import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Turns bridge messages into stored heart-rate notifications: parses (malformed lines are
/// counted and dropped), timestamps (the bridge's time when sane, else the receive time),
/// hands them to the sample writer, keeps `status.hr` current, and reacquires a bridge that
/// sends no valid measurement for `stall_timeout_s`, with a capped, jittered backoff.
struct HeartRateService: Service, CustomStringConvertible {
    let source: any HeartRateTransport
    let writer: SampleWriter
    let board: SensorBoard
    let clock: any SystemClock
    let stallTimeoutS: Double
    let reacquireMaxS: Double
    let maxLineBytes: Int
    let topicRoot: String
    let heartbeats: LoopHeartbeats
    let logger: Logger

    var description: String { "HeartRateService" }

    /// How far a bridge's timestamp may lie from the receive time and still be believed: a
    /// bridge may deliver a backlog (days), never the future.
    static let maximumBacklog: TimeInterval = 7 * 86_400
    static let maximumLead: TimeInterval = 60

    func run() async throws {
        source.start()
        await withGracefulShutdownHandler {
            await consume()
        } onGracefulShutdown: {
            source.stop()
        }
    }

    private func consume() async {
        var status = SensorBoard.HeartRate()
        var lastValid = ContinuousClock.now
        var nextStallCheck = ContinuousClock.now + .seconds(stallTimeoutS)
        var backoff = Backoff(minimum: stallTimeoutS, maximum: max(stallTimeoutS, reacquireMaxS))
        var dropped = 0
        for await event in source.events {
            heartbeats.beat("hr")
            switch event {
            case .ready:
                if status.state == "disconnected" {
                    status.state = "stalled"
                    await board.update(heartRate: status)
                }
            case .failed(let reason):
                logger.warning("heart-rate input failed", metadata: ["reason": "\(reason)"])
                status.state = "disconnected"
                await board.update(heartRate: status)
            case .line(let line):
                let received = clock.now()
                switch BridgeMessage.parse(line, maxBytes: maxLineBytes) {
                case .failure(let rejection):
                    dropped += 1
                    if dropped == 1 || dropped % 1000 == 0 {
                        logger.notice("dropped a malformed heart-rate message", metadata: ["reason": "\(rejection)", "dropped": "\(dropped)"])
                    }
                case .success(let message):
                    let sample = Self.stored(message, received: received, synchronised: clock.isSynchronised())
                    await writer.add(heartRate: sample)
                    status.lastSampleMs = sample.receivedMs
                    if sample.valid {
                        lastValid = .now
                        backoff.reset()
                        nextStallCheck = .now + .seconds(stallTimeoutS)
                        status.state = "streaming"
                        status.lastValidBPM = sample.bpm
                    } else if message.measurement.contact == .notDetected {
                        status.state = "no_contact"
                    }
                    await board.update(heartRate: status)
                }
            case .idle:
                break
            }
            if ContinuousClock.now >= nextStallCheck {
                let silent = ContinuousClock.now - lastValid
                status.reacquisitions += 1
                status.state = "stalled"
                await board.update(heartRate: status)
                let delay = backoff.nextDelay()
                nextStallCheck = .now + .seconds(delay)
                logger.notice("reacquiring heart rate", metadata: ["silent_s": "\(silent)", "count": "\(status.reacquisitions)"])
                source.reacquire()
                try? await writer.publish([
                    EventDraft.make(root: topicRoot, kind: "hr_reacquire", details: [
                        ("count", .number(status.reacquisitions)), ("transport", .string(source.name)),
                        ("reason", .string("no valid measurement for \(silent.components.seconds) s")),
                        ("next_check_in_s", .number(delay, digits: 1)),
                    ])
                ])
            }
        }
    }

    static func stored(_ message: BridgeMessage, received: Date, synchronised: Bool) -> StoredHeartRate {
        var time = received
        if let stamp = message.timestamp {
            let lead = stamp.timeIntervalSince(received)
            // With an unsynchronised system clock the bridge's clock is the better one.
            if !synchronised || (lead <= maximumLead && -lead <= maximumBacklog) { time = stamp }
        }
        let measurement = message.measurement
        return StoredHeartRate(
            sensor: message.sensor, timeMs: Int64((time.timeIntervalSince1970 * 1000).rounded()),
            receivedMs: Int64((received.timeIntervalSince1970 * 1000).rounded()), bpm: measurement.bpm,
            contact: measurement.contact.rawValue, energyKJ: measurement.energyKJ, valid: measurement.isValid,
            raw: message.raw, rrIntervals: measurement.rrIntervals)
    }
}
