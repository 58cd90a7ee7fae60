import Store

/// The store's three original kinds by name, for tests that write and read them by hand: the
/// agent itself moves rows as a `SampleBatch` keyed by kind.
extension Store {
    @discardableResult
    public func write(
        fixes: [StoredFix] = [], heartRates: [StoredHeartRate] = [], steps: [StoredStepRecord] = [], messages: [OutboxDraft] = [],
        workouts: [StoredWorkout] = []
    ) throws -> StoreWriteResult {
        try write(SampleBatch(fixes: fixes, heartRates: heartRates, steps: steps), messages: messages, workouts: workouts)
    }
}

extension SampleBatch {
    public init(fixes: [StoredFix] = [], heartRates: [StoredHeartRate] = [], steps: [StoredStepRecord] = []) {
        self.init()
        self[FixKind.self] = fixes
        self[HeartRateKind.self] = heartRates
        self[StepRecordKind.self] = steps
    }

    public var fixes: [StoredFix] { self[FixKind.self] }
    public var heartRates: [StoredHeartRate] { self[HeartRateKind.self] }
    public var steps: [StoredStepRecord] { self[StepRecordKind.self] }
}

extension NewRows {
    public var fixes: [StoredFix] { rows.fixes }
    public var heartRates: [StoredHeartRate] { rows.heartRates }
    public var steps: [StoredStepRecord] { rows.steps }
}

extension StoreWriteResult {
    public var fixesInserted: Int { inserted(FixKind.self) }
    public var heartRatesInserted: Int { inserted(HeartRateKind.self) }
    public var stepRecordsInserted: Int { inserted(StepRecordKind.self) }
}

extension RowCursor {
    public init(fixID: Int64 = 0, heartRateID: Int64 = 0, stepID: Int64 = 0) {
        self.init()
        self[FixKind.self] = fixID
        self[HeartRateKind.self] = heartRateID
        self[StepRecordKind.self] = stepID
    }

    public var fixID: Int64 { self[FixKind.self] }
    public var heartRateID: Int64 { self[HeartRateKind.self] }
    public var stepID: Int64 { self[StepRecordKind.self] }
}

extension StoreReopened {
    public var fixes: Int { rowsCarried[FixKind.rowsName] ?? 0 }
    public var heartRates: Int { rowsCarried[HeartRateKind.rowsName] ?? 0 }
    public var stepRecords: Int { rowsCarried[StepRecordKind.rowsName] ?? 0 }
}
