import Foundation
import SleepStaging
import TestKit

/// The hour of real RR intervals the repository ships (Tests/Fixtures/hr/nsr-60min.ndjson, made
/// from pyhrv 0.5.0's SampleNNISeriesLong.npy, MIT-BIH Normal Sinus Rhythm database), read two ways:
/// the exact intervals in ms (each message's plain `rr`), and the notifications a strap would have
/// sent (`ts` and the 1/1024-s intervals in `raw`), as the agent stores them.
struct NSRFixture {
    /// Normal-to-normal intervals, ms, in order (the original integers).
    let intervalsMs: [Int]
    let notifications: [HeartRateNotification]

    static let shared: NSRFixture = {
        do { return try NSRFixture(path: Tools.fixture("hr/nsr-60min.ndjson")) } catch {
            fatalError("reading the NSR fixture: \(error)")
        }
    }()

    init(path: String) throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var intervals: [Int] = []
        var notifications: [HeartRateNotification] = []
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let stamp = object["ts"] as? String, let date = formatter.date(from: stamp),
                  let raw = object["raw"] as? String, let plain = object["rr"] as? [Int]
            else { throw SleepStagingError.invalidInput("fixture line: \(line)") }
            intervals += plain
            notifications.append(HeartRateNotification(
                timeMs: Int64((date.timeIntervalSince1970 * 1000).rounded()), rr1024: Self.rr1024(hex: raw)))
        }
        intervalsMs = intervals
        self.notifications = notifications
    }

    /// Heartbeat times (s) of `intervals` (ms), the first beat at `start`, as sleepecg takes them.
    static func heartbeatTimes(intervalsMs: [Int], start: Double = 0) -> [Double] {
        var times = [start]
        var elapsedMs = 0
        for interval in intervalsMs {
            elapsedMs += interval
            times.append(start + Double(elapsedMs) / 1000)
        }
        return times
    }

    /// The RR fields of a Heart Rate Measurement value (flags, u8/u16 bpm, optional energy, RR…).
    static func rr1024(hex: String) -> [Int] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        guard let flags = bytes.first, flags & 0x10 != 0 else { return [] }
        var offset = flags & 0x01 != 0 ? 3 : 2
        if flags & 0x08 != 0 { offset += 2 }
        var values: [Int] = []
        while offset + 1 < bytes.count {
            values.append(Int(bytes[offset]) | Int(bytes[offset + 1]) << 8)
            offset += 2
        }
        return values
    }
}
