/// What sleepecg knows about the sleeper besides the heart: its `SubjectData`. Unknown values are
/// what sleepecg does with missing subject data: the feature is NaN, and the classifier sees its
/// mask value, -1 (`stage()` replaces every non-finite feature with it).
public struct SubjectData: Sendable, Equatable {
    public enum Gender: Int, Sendable {
        case female = 0
        case male = 1
    }

    /// Years.
    public var age: Int?
    public var gender: Gender?

    public init(age: Int? = nil, gender: Gender? = nil) {
        self.age = age
        self.gender = gender
    }
}

/// One recording to classify: a night (or any stretch) of a strap's beats, like sleepecg's
/// `SleepRecord` without sleep stages.
public struct SleepRecording: Sendable {
    /// When the recording starts (Unix seconds). Epoch k covers `[start + 30 k, start + 30 (k+1))`.
    public var startUnix: Double
    /// The local time's offset from UTC at the start, seconds (e.g. 3600 for CET): the classifier
    /// takes the start's local clock time as a feature (`recording_start_time`, seconds since local
    /// midnight, whole seconds).
    public var utcOffsetSeconds: Int
    /// RR intervals, times in seconds since `startUnix`.
    public var rr: RRSeries
    public var subject: SubjectData

    public init(startUnix: Double, utcOffsetSeconds: Int, rr: RRSeries, subject: SubjectData = SubjectData()) {
        self.startUnix = startUnix
        self.utcOffsetSeconds = utcOffsetSeconds
        self.rr = rr
        self.subject = subject
    }

    /// sleepecg's `_time_to_sec(recording_start_time)`: the start's local time of day in whole
    /// seconds, 0…86399.
    public var startClockSeconds: Int {
        let local = Int64((startUnix).rounded(.down)) + Int64(utcOffsetSeconds)
        let day: Int64 = 86_400
        return Int(((local % day) + day) % day)
    }
}
