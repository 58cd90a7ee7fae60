import Foundation

/// One accelerometer sample, milli-g on the sensor's three axes (Polar's PMD ACC unit).
public struct AccelerationSample: Sendable, Equatable {
    public var x: Int
    public var y: Int
    public var z: Int

    public init(x: Int, y: Int, z: Int) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// The length of the vector, mG: independent of how the strap sits.
    public var magnitude: Double {
        let (x, y, z) = (Double(x), Double(y), Double(z))
        return (x * x + y * y + z * z).squareRoot()
    }
}

/// The payload of an accelerometer bridge message, `"char":"pmd_acc"`:
/// `{"ts":"<ISO-8601 UTC of the first sample>","seq":…,"sensor":…,"char":"pmd_acc","rate_hz":50,
/// "samples":[[x,y,z],…]}`, samples in mG, evenly spaced at `rate_hz`, oldest first.
///
/// `sensor`, `ts` and `seq` are the bridge message's common fields, read by the agent's
/// `BridgeMessage`; this reads what is particular to the kind.
public struct AccelerationBatch: Sendable, Equatable {
    public var rateHz: Double
    public var samples: [AccelerationSample]

    public init(rateHz: Double, samples: [AccelerationSample]) {
        self.rateHz = rateHz
        self.samples = samples
    }

    /// Rates a sensor can plausibly stream at (the Polar H10 offers 25, 50, 100 and 200 Hz).
    public static let rateRange: ClosedRange<Double> = 10...1000
    /// More samples than this in one message is refused (the reference bridge sends ≤ 100).
    public static let maxSamples = 1000
    /// |value| above this is no accelerometer reading (±16 g covers every wearable's range).
    public static let maxMilliG = 16_000

    /// How long the batch lasts: one sample period per sample.
    public var durationMs: Double { Double(samples.count) * 1000 / rateHz }

    public enum Rejection: Error, Equatable, CustomStringConvertible {
        case missing(String)
        case badField(String)
        case badSample(index: Int)

        public var description: String {
            switch self {
            case .missing(let field): "no \"\(field)\""
            case .badField(let field): "bad \"\(field)\""
            case .badSample(let index): "sample \(index) is not [x,y,z] integers in ±\(AccelerationBatch.maxMilliG) mG"
            }
        }
    }

    /// Reads `rate_hz` and `samples` from a decoded JSON object (`JSONSerialization`'s types).
    public static func parse(_ object: [String: Any]) -> Result<AccelerationBatch, Rejection> {
        guard let rateValue = object["rate_hz"] else { return .failure(.missing("rate_hz")) }
        guard let rate = number(rateValue), rateRange.contains(rate) else { return .failure(.badField("rate_hz")) }
        guard let samplesValue = object["samples"] else { return .failure(.missing("samples")) }
        guard let list = samplesValue as? [Any], !list.isEmpty, list.count <= maxSamples else {
            return .failure(.badField("samples"))
        }
        var samples: [AccelerationSample] = []
        samples.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            guard let axes = item as? [Any], axes.count == 3,
                let x = milliG(axes[0]), let y = milliG(axes[1]), let z = milliG(axes[2])
            else { return .failure(.badSample(index: index)) }
            samples.append(AccelerationSample(x: x, y: y, z: z))
        }
        return .success(AccelerationBatch(rateHz: rate, samples: samples))
    }

    /// A JSON number, not a boolean: Foundation bridges both to NSNumber, booleans with the
    /// objCType of a C char, which no JSON number gets.
    private static func number(_ value: Any) -> Double? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }

    private static func milliG(_ value: Any) -> Int? {
        guard let double = number(value), let int = Int(exactly: double), abs(int) <= maxMilliG else { return nil }
        return int
    }
}
