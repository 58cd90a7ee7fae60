import Foundation
import TestKit

/// A synthesised ride (no recorded ride with a known distance and cadence was at hand): one
/// combined CSC sensor notifying once a second, its wheel and crank turning steadily. Each
/// notification's 0x2A5B value is written here byte by byte from the characteristic's layout
/// (flags 0x03; wheel revolutions uint32, last wheel event time uint16 in 1/1024 s; crank
/// revolutions uint16, last crank event time uint16; little-endian), not by the code under
/// test. The counts start near their wrap, so a 20-minute ride wraps both.
///
/// What the day's `riding` must say follows from the construction: the revolutions between the
/// first notification and the last, and the event times' span (a steady turn gives every
/// one-second step at least one revolution, so the spans add up to it).
struct SynthesisedRide: Sendable {
    struct Notification: Sendable {
        var timeMs: Int64
        var raw: [UInt8]
        var hex: String { raw.map { String(format: "%02x", $0) }.joined() }
    }

    let sensor: String
    let notifications: [Notification]
    let wheelRevolutions: Int
    let crankRevolutions: Int
    /// 1/1024 s from the first notification's last wheel (crank) event to the last one's.
    let rollingTicks: Int
    let pedallingTicks: Int

    init(
        sensor: String = "bike", startMs: Int64, seconds: Int, wheelPerSecond: Double = 3.3, crankPerMinute: Double = 85,
        wheelStart: UInt32 = .max - 1000, crankStart: UInt16 = 65_000
    ) {
        let crankPerSecond = crankPerMinute / 60
        // The sensor's free-running 1/1024-s clock, unwrapped, at the ride's start.
        let clockStart = 3000
        func count(_ rate: Double, at seconds: Double) -> Int { Int((seconds * rate).rounded(.down)) }
        func ticks(_ revolutions: Int, _ rate: Double) -> Int { clockStart + Int((Double(revolutions) / rate * 1024).rounded()) }
        var notifications: [Notification] = []
        var first: (wheel: Int, crank: Int)?
        var last = (wheel: 0, crank: 0)
        for index in 0..<seconds {
            let t = Double(index) + 0.5
            let wheel = count(wheelPerSecond, at: t), crank = count(crankPerSecond, at: t)
            let wheelCount = wheelStart &+ UInt32(wheel), crankCount = crankStart &+ UInt16(truncatingIfNeeded: crank)
            let wheelTime = UInt16(ticks(wheel, wheelPerSecond) % 65_536), crankTime = UInt16(ticks(crank, crankPerSecond) % 65_536)
            var raw: [UInt8] = [0x03]
            raw += (0..<4).map { UInt8(truncatingIfNeeded: wheelCount >> (8 * UInt32($0))) }
            raw += [UInt8(wheelTime & 0xFF), UInt8(wheelTime >> 8)]
            raw += [UInt8(crankCount & 0xFF), UInt8(crankCount >> 8)]
            raw += [UInt8(crankTime & 0xFF), UInt8(crankTime >> 8)]
            notifications.append(Notification(timeMs: startMs + Int64(index) * 1000 + 500, raw: raw))
            if first == nil { first = (wheel, crank) }
            last = (wheel, crank)
        }
        let start = first ?? (0, 0)
        self.sensor = sensor
        self.notifications = notifications
        wheelRevolutions = last.wheel - start.wheel
        crankRevolutions = last.crank - start.crank
        rollingTicks = ticks(last.wheel, wheelPerSecond) - ticks(start.wheel, wheelPerSecond)
        pedallingTicks = ticks(last.crank, crankPerSecond) - ticks(start.crank, crankPerSecond)
    }

    /// As the bridge sends them: one NDJSON line each, `"char":"2a5b"`.
    var lines: [String] {
        notifications.map { #"{"ts":"\#(BridgeBacklog.timestamp($0.timeMs))","sensor":"\#(sensor)","char":"2a5b","raw":"\#($0.hex)"}"# }
    }

    static func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    /// The `riding` figures it must give on a wheel of `circumferenceMm`.
    func expected(circumferenceMm: Int) -> (distanceM: Double, rollingS: Double, cadenceAvg: Double) {
        (Self.rounded(Double(wheelRevolutions * circumferenceMm) / 1000), Self.rounded(Double(rollingTicks) / 1024),
         Self.rounded(Double(crankRevolutions) * 60 * 1024 / Double(pedallingTicks)))
    }
}
