/// What one sensor's wheel and crank did between two of its CSC Measurements (0x2A5B): the
/// revolutions counted and the 1/1024-s time they span, from which the caller computes cadence
/// (`revolutions × 60 × 1024 / time1024` rpm) and wheel distance (revolutions × circumference).
///
/// The rule, from the Cycling Speed and Cadence Service 1.0 and Profile 1.0 (CSCP §4.4: "the Collector
/// shall take into account that the Wheel Event Time and the Last Crank Event Time can roll over
/// during a ride"): a rate is the difference of two successive cumulative counts over the
/// difference of their last event times, each difference taken modulo its field's width — wheel
/// revolutions 2^32, crank revolutions 2^16, event times 2^16 (64 s).
///
/// - A stopped wheel or crank makes the sensor repeat its count and event time: `.unchanged`, no
///   revolution and no time. It is not yet a stop — at 20 rpm a crank turns once in 3 s, so
///   the sensor repeats itself between revolutions. Implementations differ on when to call it 0:
///   GoldenCheetah (src/Train/BT40Device.cpp, `getCadence`, `getWheelRpm`) keeps the last
///   cadence through two repeated crank event times and reports 0 from the third (at one
///   notification a second, about 3 s), but wheel rpm 0 at the first repeat; OpenTracks
///   (sensors/sensorData/AggregatorCyclingCadence.java) keeps the last value while the event
///   time repeats and falls back to 0 only when notifications stop. Here `stopAfterSeconds`
///   (3 s, GoldenCheetah's crank delay, for both channels): the caller reads 0 once a channel
///   has been `.unchanged` for that long by its own clock.
/// - A count that goes back (a battery change; a client writing the SC Control Point's Set
///   Cumulative Value), or moves further than the time allows at `maximumWheelPerSecond` /
///   `maximumCrankPerSecond`, is `.reset`: nothing counted, the new measurement is the base. A
///   genuine wrap (2^32 − 2 → 1) is a small forward step and counted. OpenTracks skips a count
///   that went back too (it notes the wrap as a to-do); this rule tells the two apart.
/// - Two measurements the caller received 64 s or more apart (`secondsApart`) cannot be timed
///   from 16-bit event times: `.untimed` keeps the revolutions (distance still holds), no rate.
/// - A channel missing from either measurement (a speed-only or cadence-only sensor, or a
///   combined sensor that alternates) is `.absent`; `CSCFollower` keeps each channel's last data
///   so alternating sensors still count.
public struct CSCRevolutions: Sendable, Equatable {
    public enum Span: Sendable, Equatable {
        /// `revolutions` (≥ 0) between two last-event times `time1024` 1/1024 s apart (> 0).
        case counted(revolutions: Int, time1024: Int)
        /// The same count and event time again: no revolution, no time passed.
        case unchanged
        /// Revolutions counted across a gap the event times cannot measure.
        case untimed(revolutions: Int)
        /// The count went back or jumped beyond what the time allows: nothing counted.
        case reset
        /// One of the two measurements has no data for this channel.
        case absent

        /// The revolutions this span adds to a distance or a count (0 unless counted).
        public var revolutions: Int {
            switch self {
            case .counted(let revolutions, _), .untimed(let revolutions): revolutions
            case .unchanged, .reset, .absent: 0
            }
        }
    }

    public var wheel: Span
    public var crank: Span

    public init(wheel: Span, crank: Span) {
        self.wheel = wheel
        self.crank = crank
    }

    /// A wheel of 1 m circumference at 108 km/h; a smaller wheel that fast is not a bicycle.
    public static let maximumWheelPerSecond = 30.0
    /// 300 rpm, above any cadence reported for track sprints.
    public static let maximumCrankPerSecond = 5.0
    /// A channel `.unchanged` this long (by the caller's clock) reads as stopped: 0 rpm, 0 m/s.
    public static let stopAfterSeconds = 3.0

    /// What happened between `previous` and `current`, two successive measurements of one
    /// sensor; `secondsApart`, the caller's time between receiving them, when it knows it.
    public static func between(
        _ previous: CSCMeasurement, _ current: CSCMeasurement, secondsApart: Double? = nil
    ) -> CSCRevolutions {
        CSCRevolutions(
            wheel: wheel(from: previous.wheel, to: current.wheel, secondsApart: secondsApart),
            crank: crank(from: previous.crank, to: current.crank, secondsApart: secondsApart))
    }

    public static func wheel(
        from previous: CSCMeasurement.Wheel?, to current: CSCMeasurement.Wheel?, secondsApart: Double? = nil
    ) -> Span {
        guard let previous, let current else { return .absent }
        return span(
            revolutions: Int(current.revolutions &- previous.revolutions),
            time1024: Int(current.eventTime &- previous.eventTime),
            perSecond: maximumWheelPerSecond, secondsApart: secondsApart)
    }

    public static func crank(
        from previous: CSCMeasurement.Crank?, to current: CSCMeasurement.Crank?, secondsApart: Double? = nil
    ) -> Span {
        guard let previous, let current else { return .absent }
        return span(
            revolutions: Int(current.revolutions &- previous.revolutions),
            time1024: Int(current.eventTime &- previous.eventTime),
            perSecond: maximumCrankPerSecond, secondsApart: secondsApart)
    }

    /// `revolutions` and `time1024` are the forward differences, already taken modulo the
    /// fields' widths: a count that went back shows as a step of nearly the whole range.
    private static func span(revolutions: Int, time1024: Int, perSecond: Double, secondsApart: Double?) -> Span {
        if revolutions == 0 && time1024 == 0 { return .unchanged }
        if let secondsApart, secondsApart >= 64 {
            return revolutions <= allowed(seconds: secondsApart, perSecond: perSecond) ? .untimed(revolutions: revolutions) : .reset
        }
        // Revolutions without time cannot happen on a sensor that kept counting.
        guard time1024 > 0 else { return .reset }
        return revolutions <= allowed(seconds: Double(time1024) / 1024, perSecond: perSecond)
            ? .counted(revolutions: revolutions, time1024: time1024) : .reset
    }

    /// One revolution of slack: the first may have begun just before the earlier event time.
    private static func allowed(seconds: Double, perSecond: Double) -> Int {
        Int((seconds * perSecond).rounded(.up)) + 1
    }
}

/// Follows one sensor's CSC Measurements and turns each into `CSCRevolutions` against that
/// sensor's last wheel data and last crank data, kept apart: a combined sensor that sends wheel
/// and crank data in alternate notifications, or a cadence sensor that sends a stale wheel
/// block, still counts each channel against its own previous value (compared whole-measurement
/// to whole-measurement, every span of an alternating sensor would be `.absent`).
///
/// A repeat (`.unchanged`) leaves the base and its receive time alone: after a long stop the
/// next revolution is measured from the last real one, so a stop of over 64 s, which the
/// 16-bit event times cannot span, comes out `.untimed` rather than as a wrong rate.
public struct CSCFollower: Sendable {
    private struct Last<Data: Sendable>: Sendable {
        var data: Data
        var receivedSeconds: Double
    }

    private var wheel: Last<CSCMeasurement.Wheel>?
    private var crank: Last<CSCMeasurement.Crank>?

    public init() {}

    /// What `measurement`, received at `receivedSeconds` on the caller's monotonic clock, adds
    /// to what came before; a channel first seen is `.absent` (nothing to compare with).
    public mutating func add(_ measurement: CSCMeasurement, receivedSeconds: Double) -> CSCRevolutions {
        var result = CSCRevolutions(wheel: .absent, crank: .absent)
        if let current = measurement.wheel {
            if let last = wheel {
                result.wheel = CSCRevolutions.wheel(
                    from: last.data, to: current, secondsApart: receivedSeconds - last.receivedSeconds)
            }
            if result.wheel != .unchanged { wheel = Last(data: current, receivedSeconds: receivedSeconds) }
        }
        if let current = measurement.crank {
            if let last = crank {
                result.crank = CSCRevolutions.crank(
                    from: last.data, to: current, secondsApart: receivedSeconds - last.receivedSeconds)
            }
            if result.crank != .unchanged { crank = Last(data: current, receivedSeconds: receivedSeconds) }
        }
        return result
    }
}
