/// What a foot pod's RSC cadence counts. The specification says only "1/min"; devices differ on
/// whether that is every foot contact (steps) or one foot's (strides, half as many). Set per
/// sensor, default `.steps`; the devices we know of are listed in docs/steps.md with sources.
public enum CadenceUnit: String, Sendable, CaseIterable {
    case steps
    case strides

    /// Steps per counted unit: a stride is two steps.
    public var stepsPerUnit: Int { self == .steps ? 1 : 2 }

    /// The cadence in steps per minute.
    public func stepsPerMinute(_ cadence: Int) -> Int { cadence * stepsPerUnit }
}
