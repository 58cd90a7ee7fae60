/// `[bike]`: what turns a bike's wheel revolutions (BLE Cycling Speed and Cadence) into metres.
struct BikeSettings: Sendable, Equatable {
    /// The wheel's rolling circumference: 2105 mm is a 700×25C road tyre (the usual table's figure).
    var wheelCircumferenceMm = 2105
}

extension ConfigKeys {
    static var bike: [K] {
        [.int("bike", "wheel_circumference_mm", \.bike.wheelCircumferenceMm, default: 2105, in: 500...4000)]
    }
}
