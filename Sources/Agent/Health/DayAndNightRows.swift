import Store

/// The heart-rate rows of a day and of its night window (18:00 the evening before to 18:00), as a
/// kept night and a day's kept folds are checked against them: counted from the time index over
/// three spans that do not overlap, so the eighteen hours the two share are read once.
struct DayAndNightRows {
    var night: RowFingerprint
    var day: RowFingerprint

    init(_ day: LocalDay, reader: StoreReader) throws {
        let bounds = day.boundsMs
        let window = SleepNight.window(of: day)
        guard window.start <= bounds.start, bounds.start <= window.end, window.end <= bounds.end else {
            night = try reader.read { try $0.heartRateFingerprint(fromMs: window.start, toMs: window.end) }
            self.day = try reader.read { try $0.heartRateFingerprint(fromMs: bounds.start, toMs: bounds.end) }
            return
        }
        let evening = try reader.read { try $0.heartRateFingerprint(fromMs: window.start, toMs: bounds.start) }
        let shared = try reader.read { try $0.heartRateFingerprint(fromMs: bounds.start, toMs: window.end) }
        let late = try reader.read { try $0.heartRateFingerprint(fromMs: window.end, toMs: bounds.end) }
        night = evening.followed(by: shared, startingAfterMs: bounds.start - window.start)
        self.day = shared.followed(by: late, startingAfterMs: window.end - bounds.start)
    }
}
