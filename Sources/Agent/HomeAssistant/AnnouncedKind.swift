import Store

/// A sample kind with Home Assistant entities of its own (they read the fields its figures add
/// to `health/today`): the catalogue lists them after its own (docs/contract.md's table too).
protocol AnnouncedKind: SampleKind {
    static var entities: [DiscoveryEntity] { get }
}
