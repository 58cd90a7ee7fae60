/// A series' notification times (Unix ms, ascending), 4 bytes each where an `Int64` takes 8: the
/// first time, and every time as milliseconds after it. A night window's series spans at most
/// a day; a `UInt32` of milliseconds reaches 49 days (issue 32: the agent holds up to four
/// nights' notifications while a backlog lands).
public struct NotificationTimes: RandomAccessCollection, Sendable, Equatable {
    public typealias Indices = Range<Int>

    private var first: Int64 = 0
    private var offsets: [UInt32] = []

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { offsets.count }

    public subscript(position: Int) -> Int64 { first + Int64(offsets[position]) }

    /// False, and nothing added, for a time before the newest one or over 49 days after the first.
    mutating func append(_ timeMs: Int64) -> Bool {
        guard let newest = last else {
            first = timeMs
            offsets.appendGrowingGently(0)
            return true
        }
        guard timeMs >= newest, let offset = UInt32(exactly: timeMs - first) else { return false }
        offsets.appendGrowingGently(offset)
        return true
    }
}
