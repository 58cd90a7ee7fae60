/// Each epoch's heart rate from the strap's RR intervals: 60 × beats / their summed length, over the
/// intervals within sleepecg's limits (0.3–2 s) carried by the notifications sent in the epoch (a
/// notification reports the beats of the second before it, so an interval lands at most about a
/// second late). nil for an epoch without one: no usable beat, no heart rate.
public enum EpochHeartRate {
    /// - Parameters:
    ///   - epochs: the classified epochs, in time order (jumps in time allowed).
    ///   - notifications: the strap's notifications in time order: time (Unix s) and RR intervals
    ///     in 1/1024 s (empty for one without beats or not worn).
    public static func perEpoch(_ epochs: [SleepEpoch], notifications: [(time: Double, rr1024: [Int])]) -> [Double?] {
        perEpoch(epochs, notifications: notifications.lazy.map { $0 })
    }

    /// The same from a strap's compact series: its valid notifications.
    public static func perEpoch(_ epochs: [SleepEpoch], series: NotificationSeries) -> [Double?] {
        let times = series.timesMs
        return perEpoch(
            epochs, notifications: series.indices.lazy.filter { series.isValid(at: $0) }.map { (time: Double(times[$0]) / 1000, rr1024: series.rrSlice(at: $0)) })
    }

    private static func perEpoch<Notifications: Sequence, Intervals: Collection>(
        _ epochs: [SleepEpoch], notifications: Notifications
    ) -> [Double?] where Notifications.Element == (time: Double, rr1024: Intervals), Intervals.Element: BinaryInteger {
        var beats = [Int](repeating: 0, count: epochs.count)
        var seconds = [Double](repeating: 0, count: epochs.count)
        var epoch = 0
        for notification in notifications where !notification.rr1024.isEmpty {
            while epoch < epochs.count && epochs[epoch].end <= notification.time { epoch += 1 }
            guard epoch < epochs.count else { break }
            guard epochs[epoch].start <= notification.time else { continue }
            for interval in notification.rr1024 {
                let value = Double(interval) / 1024
                guard value >= WsGruMesaArchive.minRRSeconds && value <= WsGruMesaArchive.maxRRSeconds else { continue }
                beats[epoch] += 1
                seconds[epoch] += value
            }
        }
        return zip(beats, seconds).map { count, total in count > 0 ? 60 * Double(count) / total : nil }
    }
}
