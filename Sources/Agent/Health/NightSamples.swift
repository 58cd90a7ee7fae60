import Store

/// A night window's heart-rate notifications, by sensor, in time order, kept compactly: what
/// `SleepNight` is computed from (times, bpm, valid, RR intervals; not the raw bytes, the
/// receive time or the energy). About 12 bytes a notification where a `StoredHeartRate` holds
/// ~140 and a heap block, so a running day can keep its night's window between queries and
/// fold in only the rows stored since (issue 32).
struct NightSamples: Sendable {
    /// One sensor's notifications, oldest first.
    struct Series: Sendable, Equatable {
        let sensor: String
        private(set) var timesMs: [Int64] = []
        private(set) var bpm: [UInt16] = []
        private(set) var valid: [Bool] = []
        /// `rr[rrEnds[i - 1] ..< rrEnds[i]]` are notification i's RR intervals (1/1024 s).
        private(set) var rrEnds: [Int32] = []
        private(set) var rr: [UInt16] = []
        private(set) var validCount = 0

        init(sensor: String) { self.sensor = sensor }

        /// The notifications of one sensor (in time order), as a series.
        init(_ samples: some Sequence<StoredHeartRate>, sensor: String) {
            self.sensor = sensor
            for sample in samples { _ = append(sample) }
        }

        var count: Int { timesMs.count }
        var indices: Range<Int> { timesMs.indices }

        /// False, and nothing added, for a notification older than the newest one kept.
        mutating func append(_ sample: StoredHeartRate) -> Bool {
            if let last = timesMs.last, sample.timeMs < last { return false }
            timesMs.append(sample.timeMs)
            bpm.append(UInt16(clamping: sample.bpm))
            valid.append(sample.valid)
            // 0x2A37 carries uint16 RR values: they fit.
            rr.append(contentsOf: sample.rrIntervals.map { UInt16(clamping: $0) })
            rrEnds.append(Int32(rr.count))
            if sample.valid { validCount += 1 }
            return true
        }

        func rrIntervals(at index: Int) -> [Int] { Array(rrSlice(at: index)) }

        /// Notification `index`'s RR intervals without an array of their own.
        func rrSlice(at index: Int) -> LazyMapSequence<ArraySlice<UInt16>, Int> { rr[rrRange(at: index)].lazy.map(Int.init) }

        func hasRR(at index: Int) -> Bool { !rrRange(at: index).isEmpty }

        /// The sum of notification `index`'s RR intervals, 1/1024 s.
        func rrSum(at index: Int) -> Int { rrSlice(at: index).reduce(0, +) }

        private func rrRange(at index: Int) -> Range<Int> { (index == 0 ? 0 : Int(rrEnds[index - 1]))..<Int(rrEnds[index]) }
    }

    private var bySensor: [String: Series] = [:]
    /// Counts the notifications added: a night computed at one revision holds while it stands.
    private(set) var revision = 0

    /// False for a notification older than its sensor's newest kept one: the window must then be
    /// collected again from the store.
    mutating func add(_ sample: StoredHeartRate) -> Bool {
        revision += 1
        return bySensor[sample.sensor, default: Series(sensor: sample.sensor)].append(sample)
    }

    /// The strap with the most valid notifications (ties: the first name): one chest, one strap.
    var dominant: Series? {
        bySensor.values.max { a, b in a.validCount != b.validCount ? a.validCount < b.validCount : a.sensor > b.sensor }
    }

    var count: Int { bySensor.values.reduce(0) { $0 + $1.count } }
}
