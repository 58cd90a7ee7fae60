/// The sample kinds the store keeps, in the order a batch's rows are inserted and a journal
/// slot lists them. Adding a kind: a file conforming to `SampleKind`, and its line here.
public enum SampleKinds {
    public static let all: [any SampleKind.Type] = [FixKind.self, HeartRateKind.self, StepRecordKind.self, CyclingKind.self]

    /// The kind a journal slot or a cursor names; nil for one this build does not know.
    static func named(_ name: String) -> (any SampleKind.Type)? { all.first { $0.name == name } }
}
