import Foundation

/// A night of strap notifications as bridge messages (NDJSON lines), assembled from the real
/// hour of RR intervals (Tests/Fixtures/hr/nsr-60min.ndjson, MIT-BIH normal sinus rhythm): the
/// hour `hours` times, every other copy reversed, as `keepalive-sleep-bench` and docs/sleep.md
/// assemble it, sent once a second with the beats since the last one. There is no real overnight
/// RR series under a free licence here: a night assembled from real intervals is what the sleep
/// tests run on, and they say so.
public enum AssembledNightLines {
    /// Lines from `startMs` on; `skip` leaves out notifications in those ranges (a strap taken off).
    public static func lines(startMs: Int64, hours: Int = 9, sensor: String = "h10", skip: [Range<Int64>] = []) throws -> [String] {
        var hour: [Int] = []
        for line in try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            hour += object?["rr"] as? [Int] ?? []
        }
        var intervals: [Int] = []
        for copy in 0..<hours { intervals += copy % 2 == 0 ? hour : hour.reversed() }
        var lines: [String] = []
        var endMs: Int64 = 0
        var pending: [Int] = []
        var second: Int64 = 1
        var bpm = 60
        func emit() {
            let timeMs = startMs + second * 1000
            defer {
                pending = []
                second += 1
            }
            guard !skip.contains(where: { $0.contains(timeMs) }) else { return }
            if !pending.isEmpty { bpm = min(255, 60 * 1024 * pending.count / max(1, pending.reduce(0, +))) }
            // Contact detected; the RR flag only with beats in this second.
            var raw = String(format: pending.isEmpty ? "06%02x" : "16%02x", bpm)
            for rr in pending { raw += String(format: "%02x%02x", rr & 0xFF, rr >> 8) }
            lines.append(#"{"ts":"\#(BridgeBacklog.timestamp(timeMs))","sensor":"\#(sensor)","raw":"\#(raw)"}"#)
        }
        for interval in intervals {
            endMs += Int64(interval)
            while endMs > second * 1000 { emit() }
            pending.append(Int((Double(interval) * 1.024).rounded()))
        }
        return lines
    }
}
