import Foundation
import SleepStaging
import Store

/// The sleep a local date D is credited with (docs/sleep.md): the night that ends on D's morning,
/// found in the heart-rate strap's RR intervals by sleepecg's wake/sleep classifier (ported in
/// `SleepStaging`) and GGIR's sleep-period rule.
///
/// The window is 18:00 the evening before D to 18:00 on D, local time. In it, the strap that sent
/// the most valid notifications is read (one chest, one strap), cut into wear segments where it
/// sent nothing for 30 minutes (taken off), and each segment of at least 30 minutes is classified
/// as one recording starting at its first beat, as sleepecg's recordings do. `NightAssembly` puts
/// the night together from all their epochs (every block of sleep that starts before noon, time in
/// bed from wear, in progress while the strap is still worn); other sleep of at least 15 minutes
/// is a nap. Sleep that ends after 18:00 falls into the next day's window and is credited to that
/// day.
///
/// A pure function of the stored rows: a replayed backlog gives the same night.
struct SleepNight: Sendable, Equatable, Codable {
    var main: NightPeriod?
    var naps: [SleepPeriod]
    /// Lowest 5-minute rolling mean of valid samples within the main period.
    var restingHR: Double?
    /// RMSSD of the RR intervals within the main period.
    var rmssdMs: Double?
    /// What the classifier was told of the sleeper (published as `sleep.person`).
    var person: PersonGiven?

    /// `[person]` as the classifier had it: both age and sex, one of them, or neither (the
    /// network's training mean stands in for what is missing: `WakeSleepClassifier.UnknownSubject`).
    enum PersonGiven: String, Sendable, Codable {
        case given
        case partial
        case unset

        init(_ subject: SubjectData) {
            switch (subject.age, subject.gender) {
            case (.some, .some): self = .given
            case (.none, .none): self = .unset
            default: self = .partial
            }
        }
    }

    static let eveningHour = 18
    /// A night starts before noon (the 18:00–12:00 night); later sleep is a nap.
    static let noonHour = 12
    /// A strap silent this long was taken off: the recording ends there.
    static let wearGapMs: Int64 = 30 * 60_000
    /// Shorter wear cannot hold a block of sleep (GGIR's 30-minute block).
    static let minimumWearMs: Int64 = 30 * 60_000

    /// 18:00 local on the day before `day` to 18:00 on `day`, Unix ms.
    static func window(of day: LocalDay) -> (start: Int64, end: Int64) {
        (eveningMs(day.previous), eveningMs(day))
    }

    private static func eveningMs(_ day: LocalDay) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = day.timeZone
        let evening = calendar.date(bySettingHour: eveningHour, minute: 0, second: 0, of: day.start) ?? day.start.addingTimeInterval(18 * 3600)
        return evening.unixMs
    }

    /// The night from a strap's notifications in time order (see the type's comment), in the
    /// window `window` (Unix ms; nil: the notifications' own span), computed at `nowMs` (nil: the
    /// window is over, the night cannot be in progress). `cache` holds the strap's kept epoch
    /// features (`SleepEpochCache`); without one every epoch is computed.
    static func find(
        in samples: NightSamples.Series, timeZone: TimeZone, gapLimitMs: Int64, subject: SubjectData = SubjectData(),
        window: (start: Int64, end: Int64)? = nil, nowMs: Int64? = nil, cache: SleepEpochCache? = nil, heartRateRule: Bool = true
    ) -> SleepNight {
        let cache = cache ?? SleepEpochCache(sensor: samples.sensor)
        var epochs: [SleepEpoch] = []
        for segment in segments(samples) {
            epochs += cache.epochs(of: samples, segment, timeZone: timeZone, gapLimitMs: gapLimitMs, subject: subject)
        }
        let times = samples.timesMs
        let span = window ?? (times.first ?? 0, (times.last ?? 0) + 1)
        let wear = WearSpan.spans(samples)
        // Each epoch's heart rate from the valid notifications' intervals, read in place.
        let heartRate = EpochHeartRate.perEpoch(epochs, series: samples)
        let assembled = NightAssembly.assemble(
            epochs, wear: wear, window: Double(span.start) / 1000..<Double(span.end) / 1000,
            noon: noon(before: span.end, timeZone),
            now: nowMs.map { Double($0) / 1000 }, wearGapSeconds: Double(wearGapMs) / 1000,
            heartRateRule: heartRateRule ? HeartRateWakeRule() : nil, epochHeartRate: heartRate)
        var night = SleepNight(main: assembled.main, naps: assembled.naps)
        night.person = PersonGiven(subject)
        if let main = assembled.main {
            let (from, to) = (Int64(main.start * 1000), Int64(main.end * 1000))
            var resting = RestingHeartRateWindow()
            var rmssd = RMSSDAccumulator()
            for index in samples.indices where times[index] >= from && times[index] < to {
                guard let bpm = samples.bpm(at: index) else {
                    rmssd.breakChain()
                    continue
                }
                resting.add(timeMs: times[index], bpm: bpm, gapLimitMs: gapLimitMs)
                rmssd.add(rr1024: samples.rrIntervals(at: index), timeMs: times[index], gapLimitMs: gapLimitMs)
            }
            night.restingHR = resting.lowestMean
            night.rmssdMs = rmssd.rmssdMs
        }
        return night
    }

    /// 12:00 local on the window's last day (Unix s): a night starts before it (docs/sleep.md).
    private static func noon(before endMs: Int64, _ timeZone: TimeZone) -> Double {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let end = Date(unixMs: endMs - 1)
        let noon = calendar.date(bySettingHour: noonHour, minute: 0, second: 0, of: end) ?? end
        return noon.timeIntervalSince1970
    }

    /// Runs of notifications without a silence of `wearGapMs`, at least `minimumWearMs` long and
    /// carrying that much of RR intervals (a strap that sends none cannot be classified: skipped
    /// before the features are computed).
    static func segments(_ samples: NightSamples.Series) -> [Range<Int>] {
        let times = samples.timesMs
        var segments: [Range<Int>] = []
        var start = 0
        for index in samples.indices.dropFirst() where times[index] - times[index - 1] > wearGapMs {
            segments.append(start..<index)
            start = index
        }
        if start < samples.count { segments.append(start..<samples.count) }
        return segments.filter { segment in
            guard let first = segment.first, let last = segment.last, times[last] - times[first] >= minimumWearMs else { return false }
            let beatsMs = segment.reduce(0) { $0 + samples.rrSum(at: $1) } * 1000 / 1024
            return beatsMs >= minimumWearMs
        }
    }

    /// `sleep_s` and `sleep` of the payload: null without a main sleep period (the strap not worn
    /// overnight), never 0.
    func fields(timeZone: TimeZone) -> [(String, JSONValue)] {
        guard let main else { return [("sleep_s", .null), ("sleep", .null)] }
        func time(_ unix: Double) -> JSONValue { .string(ISO8601.formatLocal(Date(timeIntervalSince1970: unix), timeZone: timeZone)) }
        return [
            ("sleep_s", .number(main.sleepSeconds)),
            ("sleep", .object([
                ("start", time(main.start)), ("end", main.inProgress ? .null : time(main.end)), ("in_progress", .bool(main.inProgress)),
                ("in_bed_s", .number(main.inBedSeconds)), ("awake_s", .number(main.awakeSeconds)),
                ("unobserved_s", .number(main.unobservedSeconds)), ("efficiency", .number(main.efficiency, digits: 3)),
                ("awakenings", .number(main.awakenings)), ("resting_hr", .number(restingHR, digits: 1)),
                ("rmssd_ms", .number(rmssdMs, digits: 1)), ("method", .string(WakeSleepClassifier.method)),
                ("person", person.map { .string($0.rawValue) } ?? .null),
                ("naps", .array(naps.map { .object([("start", time($0.start)), ("end", time($0.end)), ("sleep_s", .number($0.sleepSeconds))]) })),
            ])),
        ]
    }

    static let none = SleepNight(main: nil, naps: [])
}

extension SleepNight {
    /// `day`'s night through a read-only connection (the publisher, queries, the command line): epochs computed here,
    /// and the night once its window is over, go to `keep`, where there is a writer to keep them.
    static func compute(
        _ day: LocalDay, settings: AggregateSettings, reader: StoreReader, upTo cursor: RowCursor? = nil, nowMs: Int64? = nil,
        keep: Keeping = .nothing
    ) throws -> SleepNight {
        let computed = try computeKeeping(day, settings: settings, reader: reader, upTo: cursor, nowMs: nowMs)
        keep.keep(computed.fresh)
        if let record = computed.record { keep.night?(record) }
        return computed.night
    }

    /// The night, the epochs it computed with a complete window and the night's record once its
    /// window is over, for the caller to keep. A night kept from an unchanged window is served
    /// without reading its rows (`kept`).
    static func computeKeeping(
        _ day: LocalDay, settings: AggregateSettings, reader: StoreReader, upTo cursor: RowCursor?, nowMs: Int64?
    ) throws -> (night: SleepNight, fresh: [StoredSleepEpoch], record: StoredSleepNight?) {
        let window = window(of: day)
        if nowMs.map({ $0 >= window.end }) ?? true,
            let kept = try kept(
                day, settings: settings, reader: reader,
                fingerprint: reader.read { try $0.heartRateFingerprint(fromMs: window.start, toMs: window.end) })
        {
            return (kept, [], nil)
        }
        let samples = try NightSamples(window: window, reader: reader, upTo: cursor)
        guard let series = samples.dominant else { return (.none, [], nil) }
        let cache = try SleepEpochCache(sensor: series.sensor, window: window, reader: reader)
        let night = compute(day, settings: settings, series: series, nowMs: nowMs, cache: cache)
        let record = night.keptRecord(day, settings: settings, fingerprint: samples.fingerprint(windowStartMs: window.start), nowMs: nowMs)
        return (night, cache.takeFresh(), record)
    }

    /// The night from its window's notifications already collected (a running day's), with the
    /// strap's kept epochs in `cache`.
    static func compute(
        _ day: LocalDay, settings: AggregateSettings, series: NightSamples.Series, nowMs: Int64?, cache: SleepEpochCache
    ) -> SleepNight {
        let night = find(
            in: series, timeZone: settings.timeZone, gapLimitMs: settings.gapLimitMs, subject: subject(day, settings),
            window: window(of: day), nowMs: nowMs, cache: cache, heartRateRule: settings.sleepHeartRateRule)
        cache.log(SleepEpochCache.logger, day: day)
        return night
    }

    /// The sleeper as the classifier takes it, aged as of the year of `day`.
    static func subject(_ day: LocalDay, _ settings: AggregateSettings) -> SubjectData {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = day.timeZone
        return settings.person.subject(inYear: calendar.component(.year, from: day.start))
    }

    /// Today's night is classified again at most this often while its window takes new rows:
    /// a day's window is up to 24 h of beats, ~0.7 s of one core here (docs/sleep.md).
    static let todayRefresh = Duration.seconds(900)
}
