/// A night: from its first block of sleep to the last that starts before noon (`NightAssembly`),
/// and its time in bed from wear.
public struct NightPeriod: Sendable, Equatable, Codable {
    /// Sleep onset: the start of the first sleep epoch (Unix s).
    public var start: Double
    /// Final awakening so far: the end of the last sleep epoch (Unix s).
    public var end: Double
    /// Sleep epochs between `start` and `end`.
    public var sleepSeconds: Int
    /// Wake epochs between them (WASO).
    public var awakeSeconds: Int
    /// Time between them the strap did not see (taken off, no usable beats): neither sleep nor wake.
    public var unobservedSeconds: Int
    /// Runs of wake epochs between them.
    public var awakenings: Int
    /// Time in bed: the time the strap was worn and in contact around the night (`WearSpan`),
    /// from the wear span that holds sleep onset to the one that holds the final awakening, within
    /// the night's window; never less than the observed time between onset and awakening.
    public var inBedSeconds: Int
    /// `sleepSeconds / inBedSeconds`.
    public var efficiency: Double
    /// The strap is still worn and the night may go on: `end` is only "so far".
    public var inProgress: Bool
}

public struct NightAndNaps: Sendable, Equatable {
    public var main: NightPeriod?
    /// Other sleep of at least the nap minimum, outside the night, in time order.
    public var naps: [SleepPeriod]
}
