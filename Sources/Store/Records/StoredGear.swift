/// A pair of shoes (or any gear) and what has been credited to it.
public struct StoredGear: Sendable, Equatable {
    public var id: String
    public var name: String
    public var startKm: Double
    public var limitKm: Double?
    public var retired: Bool
    public var selected: Bool
    public var createdMs: Int64
    /// The highest limit announcement already sent: 0, 80 or 100 (percent of `limitKm`).
    public var warnedPercent: Int
    public var creditedKm: Double
    public var runs: Int
    /// The end of the newest workout credited to it.
    public var lastUsedMs: Int64?

    public var totalKm: Double { startKm + creditedKm }

    public init(
        id: String, name: String, startKm: Double, limitKm: Double?, retired: Bool = false, selected: Bool = false, createdMs: Int64,
        warnedPercent: Int = 0, creditedKm: Double = 0, runs: Int = 0, lastUsedMs: Int64? = nil
    ) {
        self.id = id
        self.name = name
        self.startKm = startKm
        self.limitKm = limitKm
        self.retired = retired
        self.selected = selected
        self.createdMs = createdMs
        self.warnedPercent = warnedPercent
        self.creditedKm = creditedKm
        self.runs = runs
        self.lastUsedMs = lastUsedMs
    }
}
