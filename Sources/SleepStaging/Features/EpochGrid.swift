extension SleepRecording {
    /// The same beats as a recording that starts at the 30-s boundary of Unix time at or before
    /// this one's start, so that its epochs lie on one absolute grid (`EpochFeatures`). The beat
    /// times move by the same amount, exactly: a time relative to a Unix start is the difference
    /// of two doubles of the same magnitude, and so is its shift.
    public func alignedToEpochGrid() throws -> SleepRecording {
        let (gridStart, shift) = Self.epochGrid(startUnix: startUnix)
        let shifted = try RRSeries(intervals: rr.intervals, endTimes: rr.endTimes.map { $0 + shift })
        return SleepRecording(startUnix: gridStart, utcOffsetSeconds: utcOffsetSeconds, rr: shifted, subject: subject)
    }

    /// The 30-s boundary of Unix time at or before `startUnix`, and how far before it that is.
    static func epochGrid(startUnix: Double) -> (start: Double, shift: Double) {
        let length = Double(SleepEpoch.seconds)
        let gridStart = (startUnix / length).rounded(.down) * length
        return (gridStart, startUnix - gridStart)
    }
}
