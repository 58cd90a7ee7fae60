import StepCounting

/// How a day's steps are counted: from `[steps]` (docs/steps.md).
struct StepSettings: Sendable, Equatable {
    /// What each foot pod's cadence counts, by sensor id; `defaultUnit` for the others.
    var cadenceUnits: [String: CadenceUnit] = [:]
    var defaultUnit: CadenceUnit = .steps
    /// A gap between two RSC notifications longer than this counts no steps (a dropout).
    var dropoutMs: Int64 = 10_000

    func unit(for sensor: String) -> CadenceUnit { cadenceUnits[sensor] ?? defaultUnit }
}
