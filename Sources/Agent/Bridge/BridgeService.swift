import Foundation
import Logging
import SensorBridge
import ServiceLifecycle
import Store
import Supervision

/// Turns bridge messages into stored heart-rate notifications and step records (a foot pod's
/// RSC notifications, step windows counted from a strap's accelerometer): parses (malformed lines are
/// counted and dropped), timestamps (the bridge's time when sane, else the receive time, and
/// counts why), hands them to the sample writer — waiting while it is behind, so the bridge
/// waits too — keeps `status.hr` current, and reacquires a bridge that sends no valid
/// measurement for `stall_timeout_s`, with a capped, jittered backoff.
struct BridgeService: Service, CustomStringConvertible {
    let source: any BridgeTransport
    let writer: SampleWriter
    let board: SensorBoard
    let counters: IngestCounters
    let clock: AgentClock
    let stallTimeoutS: Double
    let reacquireMaxS: Double
    let topicRoot: String
    let heartbeats: LoopHeartbeats
    let logger: Logger

    var description: String { "BridgeService" }

    /// Receive times given in place of stamps not believed, per sensor: each one after the last,
    /// so notifications that arrived together (a backlog from a bridge whose clock was never set)
    /// are all kept, in their order, a millisecond apart, rather than taken for replays.
    struct ReceiveTimes {
        /// Per sensor: the clock's reading at the last one, and the time it was given.
        private var last: [String: (receivedMs: Int64, givenMs: Int64)] = [:]

        /// A receive time this far behind the last clock reading is the clock stepped back (chrony
        /// or NTP setting it), not a batch: stamps follow the new time. Measured against the
        /// reading, not the time given: a backlog of 10 000 given a millisecond each runs 10 s
        /// ahead of the clock, and the next batch is no step back.
        static let stepBackMs: Int64 = 1000

        mutating func next(for sensor: String, atLeast timeMs: Int64) -> Int64 {
            var time = timeMs
            if let previous = last[sensor], timeMs >= previous.receivedMs - Self.stepBackMs { time = max(timeMs, previous.givenMs + 1) }
            last[sensor] = (timeMs, time)
            return time
        }
    }

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
        var published = status
        var lastPublished = ContinuousClock.now
        var lastValid = ContinuousClock.now
        var nextStallCheck = ContinuousClock.now + .seconds(stallTimeoutS)
        var backoff = Backoff(minimum: stallTimeoutS, maximum: max(stallTimeoutS, reacquireMaxS))
        var receiveTimes = ReceiveTimes()
        var accelerometers = AccelerometerStepWindows(
            remembering: await writer.recentAccelerometerOrigins(perSensor: AccelerometerStepWindows.rememberedOrigins))
        for await event in source.events {
            heartbeats.beat("hr")
            switch event {
            case .ready:
                if status.state == .disconnected { status.state = .stalled }
            case .failed(let reason):
                logger.warning("heart-rate input failed", metadata: ["reason": "\(reason)"])
                status.state = .disconnected
            case .messages(let messages):
                let rows = stamp(messages, status: &status, receiveTimes: &receiveTimes, accelerometers: &accelerometers)
                guard !rows.isEmpty else { break }
                let waited = await store(rows)
                // Waiting for the writer means the agent, not the bridge, was slow: no stall.
                let heartRates = rows[HeartRateKind.self]
                let hasValid = heartRates.contains(where: \.valid) || rows.count > heartRates.count
                if waited || hasValid {
                    lastValid = .now
                    nextStallCheck = .now + .seconds(stallTimeoutS)
                }
                if hasValid { backoff.reset() }
            case .idle:
                if !accelerometers.isEmpty {
                    let closed = accelerometers.flush(quietFor: Self.accelerometerQuiet, receivedMs: clock.now().unixMs)
                    if !closed.isEmpty { _ = await store(Self.rows(steps: closed)) }
                }
            }
            if ContinuousClock.now >= nextStallCheck {
                let silent = ContinuousClock.now - lastValid
                status.reacquisitions += 1
                status.state = .stalled
                await board.update(heartRate: status)
                (published, lastPublished) = (status, .now)
                let delay = backoff.nextDelay()
                nextStallCheck = .now + .seconds(delay)
                logger.notice("reacquiring heart rate", metadata: ["silent_s": "\(silent)", "count": "\(status.reacquisitions)"])
                source.reacquire()
                try? await writer.publish([
                    EventDraft.make(root: topicRoot, kind: "hr_reacquire", details: [
                        ("count", .number(status.reacquisitions)), ("transport", .string(source.name)),
                        ("reason", .string("no valid measurement for \(silent.components.seconds) s")),
                        ("next_check_in_s", .number(delay, digits: 1)),
                    ], at: clock.now())
                ])
            }
            // The board (status) hears of every state change at once, of sample times at most
            // every 250 ms: a backlog streams in at thousands of messages a second.
            if status != published && (status.state != published.state || ContinuousClock.now - lastPublished >= .milliseconds(250)) {
                await board.update(heartRate: status)
                (published, lastPublished) = (status, .now)
            }
        }
        if status != published { await board.update(heartRate: status) }
        let open = accelerometers.flushAll(receivedMs: clock.now().unixMs)
        if !open.isEmpty { _ = await writer.add(bridgeRows: Self.rows(steps: open), mayWait: false) }
    }

    /// A strap whose accelerometer sent nothing for this long has its open step windows stored.
    static let accelerometerQuiet = Duration.seconds(5)


    /// The notifications among `messages`, stamped (counting stamps not believed), and the step
    /// records they make; malformed lines are counted and dropped. `status.state` follows the
    /// newest heart-rate sample's validity and contact.
    private func stamp(
        _ messages: [BridgeMessage.Parsed], status: inout SensorBoard.HeartRate, receiveTimes: inout ReceiveTimes,
        accelerometers: inout AccelerometerStepWindows
    ) -> SampleBatch {
        let received = clock.now()
        let receivedMs = received.unixMs
        let synchronised = clock.isSynchronised()
        var samples: [StoredHeartRate] = []
        var steps: [StoredStepRecord] = []
        var others = SampleBatch()
        samples.reserveCapacity(messages.count)
        for parsed in messages {
            switch parsed {
            case .failure(let rejection):
                let reason = if case .tooLong = rejection { IngestCounters.HeartRateDrop.tooLong } else { IngestCounters.HeartRateDrop.malformed }
                counters.heartRateDropped.count(reason, detail: "\(rejection)")
            case .success(let message):
                let stamp = Self.stamp(message.timestamp, received: received, synchronised: synchronised)
                var timeMs = stamp.time.unixMs
                // Stored at its receive time, a notification is named by what the bridge sent.
                var origin: Int64?
                if let reason = stamp.receiveTimeBecause {
                    counters.heartRateReceiveTimeUsed.count(reason)
                    timeMs = receiveTimes.next(for: message.sensor, atLeast: timeMs)
                    origin = BridgeOrigin.of(message)
                }
                switch message.reading {
                case .heartRate(let measurement):
                    var sample = Self.stored(message.sensor, measurement, raw: message.raw, timeMs: timeMs, received: received)
                    sample.origin = origin
                    samples.append(sample)
                    if sample.valid {
                        status.state = .streaming
                        status.lastValidBPM = sample.bpm
                    } else if measurement.contact == .notDetected {
                        status.state = .noContact
                    }
                case .acceleration(let batch):
                    switch accelerometers.add(batch, sensor: message.sensor, firstSampleMs: timeMs, receivedMs: receivedMs, origin: origin) {
                    case .success(let windows): steps += windows
                    case .failure(let refusal):
                        counters.heartRateDropped.count(IngestCounters.HeartRateDrop.duplicate, detail: "pmd_acc from \(message.sensor): \(refusal)")
                    }
                default:
                    guard BridgeFedKinds.add(message, timeMs: timeMs, receivedMs: receivedMs, origin: origin, to: &others) else {
                        counters.heartRateDropped.count(IngestCounters.HeartRateDrop.malformed, detail: "\(message.sensor): no kind stores its reading")
                        break
                    }
                }
            }
        }
        if let last = samples.last { status.lastSampleMs = last.receivedMs }
        var rows = others
        rows[HeartRateKind.self] = samples
        rows[StepRecordKind.self] += steps
        return rows
    }

    /// Hands `samples` to the sample writer, waiting (and so holding up the bridge) while the
    /// writer already holds as many as it may; true when it had to wait. Once the agent is
    /// shutting down it no longer waits: what the transport read is handed over and committed
    /// with the last batch.
    private func store(_ rows: SampleBatch) async -> Bool {
        var waited = false
        while await !writer.add(bridgeRows: rows, mayWait: !Task.isShuttingDownGracefully) {
            waited = true
            heartbeats.beat("hr")
        }
        return waited
    }

    private static func rows(steps: [StoredStepRecord]) -> SampleBatch {
        var rows = SampleBatch()
        rows[StepRecordKind.self] = steps
        return rows
    }

    /// The time a notification is stored at, and why the receive time was used instead of the
    /// bridge's stamp, if it was (an `IngestCounters.ReceiveTimeUsed` reason).
    static func stamp(_ stamp: Date?, received: Date, synchronised: Bool) -> (time: Date, receiveTimeBecause: String?) {
        typealias Reason = IngestCounters.ReceiveTimeUsed
        guard let stamp else { return (received, Reason.noStamp) }
        // Nothing was measured before this agent was written: a bridge clock that was never set.
        if stamp < TimestampFloor.date { return (received, Reason.beforeFloor) }
        // With an unsynchronised system clock the bridge's clock is the better one.
        guard synchronised else { return (stamp, nil) }
        let lead = stamp.timeIntervalSince(received)
        if lead > maximumLead { return (received, Reason.ahead) }
        if -lead > maximumBacklog { return (received, Reason.tooOld) }
        return (stamp, nil)
    }

    /// A heart-rate bridge message as stored (nil for another characteristic), for tests and benchmarks.
    static func stored(_ message: BridgeMessage, received: Date, synchronised: Bool) -> StoredHeartRate? {
        guard let measurement = message.heartRate else { return nil }
        let time = stamp(message.timestamp, received: received, synchronised: synchronised).time
        return stored(message.sensor, measurement, raw: message.raw, timeMs: time.unixMs, received: received)
    }

    static func stored(
        _ sensor: String, _ measurement: HeartRateMeasurement, raw: [UInt8], timeMs: Int64, received: Date
    ) -> StoredHeartRate {
        StoredHeartRate(
            sensor: sensor, timeMs: timeMs, receivedMs: received.unixMs, bpm: measurement.bpm,
            contact: measurement.contact.rawValue, energyKJ: measurement.energyKJ, valid: measurement.isValid,
            raw: raw, rrIntervals: measurement.rrIntervals)
    }
}
