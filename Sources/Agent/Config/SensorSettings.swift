import Store

/// A setting a sensor declares in its own file: `[section] name`, a number in a range with its
/// default. The loader reads it as every other key (a bad value exits 78 naming it), and the
/// sensor looks its value up through the same declaration.
struct SensorSetting: Sendable {
    let section: String
    let name: String
    let defaultValue: Double
    let range: ClosedRange<Double>
    /// Whether config.toml must give a whole number.
    let integer: Bool

    static func int(_ section: String, _ name: String, default value: Int, in range: ClosedRange<Int>) -> SensorSetting {
        SensorSetting(
            section: section, name: name, defaultValue: Double(value), range: Double(range.lowerBound)...Double(range.upperBound), integer: true)
    }

    static func double(_ section: String, _ name: String, default value: Double, in range: ClosedRange<Double>) -> SensorSetting {
        SensorSetting(section: section, name: name, defaultValue: value, range: range, integer: false)
    }

    var key: ConfigKey {
        ConfigKey(section: section, name: name, read: { section, config in
            config.sensors[self] = integer
                ? Double(try section.int(name, default: Int(defaultValue), in: Int(range.lowerBound)...Int(range.upperBound)))
                : try section.double(name, default: defaultValue, in: range)
        }, render: { config in
            integer ? "\(Int(config.sensors[self]))" : "\(config.sensors[self])"
        })
    }
}

/// The values of every sensor's settings, by `[section] name`; a setting not read is its default.
struct SensorSettings: Sendable, Equatable {
    private var values: [String: Double] = [:]

    subscript(setting: SensorSetting) -> Double {
        get { values["\(setting.section).\(setting.name)"] ?? setting.defaultValue }
        set { values["\(setting.section).\(setting.name)"] = newValue }
    }
}

/// A sample kind whose sensor has settings of its own, declared beside it (its file in
/// `Sensors/`): found among `SampleKinds.all`, so a sensor's section needs no line here.
protocol ConfiguredSensor: SampleKind {
    static var settings: [SensorSetting] { get }
}

enum ConfiguredSensors {
    /// Every sensor's keys, in the order of `SampleKinds.all`.
    static var keys: [ConfigKey] {
        SampleKinds.all.compactMap { $0 as? any ConfiguredSensor.Type }.flatMap { $0.settings.map(\.key) }
    }
}
