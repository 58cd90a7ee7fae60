import Foundation
import Logging
import ServiceLifecycle
import Store

/// Turns gpsd's reports into stored fixes: validates, stamps by the clock rule, thins to
/// `max_rate_hz`, hands them to the sample writer; keeps `status.gps` and `status.clock` current
/// and publishes `event/gps_reacquire` and `event/clock_source`.
struct GPSService: Service, CustomStringConvertible {
    let reader: GPSReader
    let writer: SampleWriter
    let board: SensorBoard
    let counters: IngestCounters
    let clock: AgentClock
    let maxRateHz: Double
    let topicRoot: String
    /// Called with the first valid fix after start (a location goes out right away).
    let onFirstFix: @Sendable () async -> Void
    let heartbeats: LoopHeartbeats
    let logger: Logger

    var description: String { "GPSService" }

    func run() async throws {
        reader.start()
        await withGracefulShutdownHandler {
            await consume()
        } onGracefulShutdown: {
            reader.stop()
        }
    }

    private func consume() async {
        var decimator = FixDecimator(maxRateHz: maxRateHz)
        var status = SensorBoard.GPS()
        var clockSource: ClockRule.Source?
        var firstFixSeen = false
        var thinnedCounted = 0
        for await event in reader.events {
            heartbeats.beat("gps")
            switch event {
            case .state(let state):
                status.state = state
                if state != .fixed, let held = decimator.flush() { await writer.add(fix: Self.stored(held)) }
                await board.update(gps: status)
            case .fix(let fix, let receivedAt):
                guard let stamp = ClockRule.stamp(gpsTime: fix.gpsTime, systemTime: receivedAt, systemSynchronised: clock.isSynchronised())
                else {
                    counters.gpsDropped.count(IngestCounters.GPSDrop.noTime, detail: "a fix without GPS time while the system clock is unsynchronised")
                    continue
                }
                let stamped = ValidStampedFix(
                    fix: fix, timeMs: stamp.time.unixMs,
                    receivedMs: receivedAt.unixMs, source: stamp.source)
                if clockSource != stamp.source {
                    if clockSource != nil {
                        try? await writer.publish([
                            EventDraft.make(root: topicRoot, kind: "clock_source", details: [
                                ("from", .text(clockSource?.rawValue)), ("to", .string(stamp.source.rawValue)),
                                ("skew_s", .number(stamp.skew, digits: 3)),
                            ], at: clock.now())
                        ])
                    }
                    logger.notice("fixes are stamped with \(stamp.source.rawValue) time", metadata: ["skew_s": "\(stamp.skew.map { String(format: "%.3f", $0) } ?? "none")"])
                    clockSource = stamp.source
                }
                if stamp.source == .gps { clock.observe(gpsTime: stamp.time, systemTime: receivedAt) }
                await board.update(clock: SensorBoard.Clock(source: stamp.source.rawValue, skewS: stamp.skew))
                status.lastFixMs = stamped.receivedMs
                await board.update(gps: status)
                if let released = decimator.offer(stamped) { await writer.add(fix: Self.stored(released)) }
                counters.gpsDropped.count(IngestCounters.GPSDrop.thinned, decimator.thinned - thinnedCounted)
                thinnedCounted = decimator.thinned
                if !firstFixSeen {
                    firstFixSeen = true
                    // The first fix is held by the decimator; store it now so the first location has it.
                    if let held = decimator.flush() { await writer.add(fix: Self.stored(held)) }
                    await onFirstFix()
                }
            case .reacquired(let count, let reason, let delay):
                status.reacquisitions = count
                await board.update(gps: status)
                try? await writer.publish([
                    EventDraft.make(root: topicRoot, kind: "gps_reacquire", details: [
                        ("count", .number(count)), ("reason", .string(reason)), ("reopen_in_s", .number(delay, digits: 1)),
                    ], at: clock.now())
                ])
            case .idle(let now):
                let cutoff = now.unixMs - decimator.intervalMs
                if let released = decimator.release(receivedBefore: cutoff) { await writer.add(fix: Self.stored(released)) }
            }
        }
        if let held = decimator.flush() { await writer.add(fix: Self.stored(held)) }
    }

    static func stored(_ stamped: ValidStampedFix) -> StoredFix {
        let fix = stamped.fix
        return StoredFix(
            timeMs: stamped.timeMs, receivedMs: stamped.receivedMs, lat: fix.lat, lon: fix.lon, altHAE: fix.altHAE,
            altMSL: fix.altMSL, speed: fix.speed, track: fix.track, climb: fix.climb, eph: fix.eph, epv: fix.epv,
            mode: fix.mode, satellites: fix.satellites, timeSource: stamped.source.rawValue)
    }
}
