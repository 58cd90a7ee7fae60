/// One strap's heart-rate notifications, oldest first, kept compactly: about 9 bytes a
/// notification (its time as an offset, its rate and validity in one byte, where its RR
/// intervals end, and the intervals in one flat array) where an array per notification costs a
/// heap block each. What a night is classified from: the agent keeps one
/// per sensor while a night's rows arrive and folds in only the new ones (issue 32).
///
/// Concrete on purpose: the classifier's loops over a night's ~100 000 notifications run here,
/// specialised, not through generic sequences resolved at run time.
public struct NotificationSeries: Sendable, Equatable {
    public let sensor: String
    public private(set) var timesMs = NotificationTimes()
    /// A valid notification's heart rate (25–250 bpm by the agent's rule; kept within 1–255),
    /// 0 for one the agent judged invalid: validity and rate in one byte. An invalid
    /// notification's rate is never read.
    private var validBPM: [UInt8] = []
    /// Where notification i's RR intervals end in `rr`, as an offset from where its block of
    /// `rrBlock` notifications starts (`rrBlockStarts`): 2 bytes a notification where an index
    /// into `rr` takes 4. A block holds at most 128 × `maxRRPerNotification` intervals: they fit.
    private var rrEnds: [UInt16] = []
    private var rrBlockStarts: [Int32] = []
    private var rr: [UInt16] = []
    public private(set) var validCount = 0

    public init(sensor: String) { self.sensor = sensor }

    public var count: Int { timesMs.count }
    public var indices: Range<Int> { timesMs.indices }

    /// False, and nothing added, for a notification older than the newest one kept (or over 49
    /// days after the first: `NotificationTimes`).
    public mutating func append(timeMs: Int64, bpm: Int, valid: Bool, rr1024: [Int]) -> Bool {
        guard timesMs.append(timeMs) else { return false }
        validBPM.appendGrowingGently(valid ? UInt8(clamping: max(bpm, 1)) : 0)
        // This notification (index `count - 1`) opens a block: where the block's intervals start.
        if (count - 1) % Self.rrBlock == 0 { rrBlockStarts.appendGrowingGently(Int32(clamping: rr.count)) }
        // 0x2A37 carries uint16 RR values: they fit.
        for interval in rr1024.prefix(Self.maxRRPerNotification) { rr.appendGrowingGently(UInt16(clamping: interval)) }
        rrEnds.appendGrowingGently(UInt16(rr.count - Int(rrBlockStarts[rrBlockStarts.count - 1])))
        if valid { validCount += 1 }
        return true
    }

    /// Whether notification `index` was valid (skin contact, a plausible rate).
    public func isValid(at index: Int) -> Bool { validBPM[index] != 0 }

    /// Notification `index`'s heart rate, nil where it was not valid.
    public func bpm(at index: Int) -> Int? { validBPM[index] == 0 ? nil : Int(validBPM[index]) }

    public func rrIntervals(at index: Int) -> [Int] { rrSlice(at: index).map(Int.init) }

    /// Notification `index`'s RR intervals (1/1024 s) without an array of their own.
    public func rrSlice(at index: Int) -> ArraySlice<UInt16> { rr[rrRange(at: index)] }

    public func hasRR(at index: Int) -> Bool { !rrRange(at: index).isEmpty }

    /// The sum of notification `index`'s RR intervals, 1/1024 s.
    public func rrSum(at index: Int) -> Int {
        var sum = 0
        for interval in rrSlice(at: index) { sum += Int(interval) }
        return sum
    }

    private func rrRange(at index: Int) -> Range<Int> {
        let blockStart = Int(rrBlockStarts[index / Self.rrBlock])
        let start = index % Self.rrBlock == 0 ? 0 : Int(rrEnds[index - 1])
        return (blockStart + start)..<(blockStart + Int(rrEnds[index]))
    }

    /// Notifications per block of `rrEnds`.
    static let rrBlock = 128
    /// RR intervals kept of one notification. The agent never reaches it: a bridge message's
    /// `raw` is at most 512 bytes (`HexBytes`), 255 intervals, and a strap sends one or two a
    /// second. It bounds what other callers pass, so that a block's ends fit 16 bits.
    static let maxRRPerNotification = 511
}
