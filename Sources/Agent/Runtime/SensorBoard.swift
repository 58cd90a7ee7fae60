/// The latest state of each sensor, as the sources report it; read by status and the watchdog.
actor SensorBoard {
    struct GPS: Sendable, Equatable {
        var state = GPSState.disconnected
        var lastFixMs: Int64?
        var reacquisitions = 0
    }

    struct HeartRate: Sendable, Equatable {
        var state = HeartRateState.disconnected
        var lastSampleMs: Int64?
        var reacquisitions = 0
        /// The bpm of the last valid sample (`status.hr.bpm`).
        var lastValidBPM: Int?
    }

    struct Clock: Sendable, Equatable {
        var source = "system"
        var skewS: Double?
    }

    private(set) var gps = GPS()
    private(set) var heartRate = HeartRate()
    private(set) var clock = Clock()
    /// Why the store cannot be written (disk full, read-only), or nil while it works.
    private(set) var storageError: String?
    /// The store's file was deleted or replaced under the agent and is not reopened yet.
    private(set) var storeFileProblem: String?
    /// How often the store's file was found deleted or replaced and reopened, since start.
    private(set) var storeReopened = 0
    private var changeHandlers: [@Sendable () async -> Void] = []

    func onChange(_ handler: @escaping @Sendable () async -> Void) { changeHandlers.append(handler) }

    func update(gps newValue: GPS) async {
        let changed = newValue.state != gps.state
        gps = newValue
        if changed { await notify() }
    }

    func update(heartRate newValue: HeartRate) async {
        let changed = newValue.state != heartRate.state
        heartRate = newValue
        if changed { await notify() }
    }

    func update(clock newValue: Clock) async {
        let changed = newValue.source != clock.source
        clock = newValue
        if changed { await notify() }
    }

    func update(storageError newValue: String?) async {
        let changed = (newValue == nil) != (storageError == nil)
        storageError = newValue
        if changed { await notify() }
    }

    func update(storeFileProblem newValue: String?) async {
        let changed = newValue != storeFileProblem
        storeFileProblem = newValue
        if changed { await notify() }
    }

    func noteStoreReopened() { storeReopened += 1 }

    private func notify() async {
        for handler in changeHandlers { await handler() }
    }
}
