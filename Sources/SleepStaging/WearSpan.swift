/// When a strap was worn and in contact: a run of notifications that carried a heart rate with skin
/// contact and RR intervals, none further from the next than `WearSpan.maximumGapSeconds`.
public struct WearSpan: Sendable, Equatable {
    /// Unix seconds.
    public var start: Double
    public var end: Double

    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }

    /// A longer silence (or contact lost this long) is a gap in wear: the same length after which
    /// `SleepPeriods` calls a run of epochs without beats missing data.
    public static let maximumGapSeconds = Double(SleepPeriodRule().dataGapSeconds)

    /// Spans from notification times (Unix s, in order) and whether each was worn (contact, RR).
    public static func spans(_ notifications: [(time: Double, worn: Bool)]) -> [WearSpan] {
        spans(of: notifications)
    }

    /// The same from a strap's compact series: worn is valid with RR intervals.
    public static func spans(_ series: NotificationSeries) -> [WearSpan] {
        spans(of: series.indices.lazy.map { (time: Double(series.timesMs[$0]) / 1000, worn: series.isValid(at: $0) && series.hasRR(at: $0)) })
    }

    private static func spans(of notifications: some Sequence<(time: Double, worn: Bool)>) -> [WearSpan] {
        var spans: [WearSpan] = []
        for notification in notifications where notification.worn {
            if let last = spans.last, notification.time - last.end <= maximumGapSeconds {
                spans[spans.count - 1].end = notification.time
            } else {
                spans.append(WearSpan(start: notification.time, end: notification.time))
            }
        }
        return spans
    }
}
