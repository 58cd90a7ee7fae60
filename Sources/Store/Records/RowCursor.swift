/// The newest fix, heart-rate and step row ids seen: where reading new rows continues.
public struct RowCursor: Sendable, Equatable {
    public var fixID: Int64
    public var heartRateID: Int64
    public var stepID: Int64

    public init(fixID: Int64 = 0, heartRateID: Int64 = 0, stepID: Int64 = 0) {
        self.fixID = fixID
        self.heartRateID = heartRateID
        self.stepID = stepID
    }
}
