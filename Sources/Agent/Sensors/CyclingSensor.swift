import SensorBridge
import Store

/// A bike's speed and cadence sensor (BLE CSC, 0x2A5B) in the agent: the bridge's reading stored
/// as a `CyclingKind` row, the day's riding figures, their Home Assistant entities, and a ride's
/// distance from the wheel where the GPS is poor or absent. `[bike] wheel_circumference_mm`
/// turns wheel revolutions into metres.
extension CyclingKind: BridgeFed, FiguredKind, AnnouncedKind, ConfiguredSensor {
    typealias Figures = RidingFigures
    static var forwarded: (any ForwardedCharacteristic.Type)? { CSCMeasurement.self }

    /// `[bike] wheel_circumference_mm`: the wheel's rolling circumference; 2105 mm is a 700×25C
    /// road tyre (the usual table's figure).
    static let wheelCircumferenceMm = SensorSetting.int("bike", "wheel_circumference_mm", default: 2105, in: 500...4000)
    static var settings: [SensorSetting] { [wheelCircumferenceMm] }

    static func row(of message: BridgeMessage, timeMs: Int64, receivedMs: Int64, origin: Int64?) -> StoredCSCMeasurement? {
        guard case .forwarded(let value) = message.reading, value is CSCMeasurement else { return nil }
        return StoredCSCMeasurement(sensor: message.sensor, timeMs: timeMs, receivedMs: receivedMs, raw: message.raw, origin: origin)
    }
}

/// The day's riding: wheel distance and time, pedalling cadence. Each sensor's notifications are
/// followed in time order (`CSCFollower`: wraparound, a stopped wheel, a sensor sending one of the
/// two or alternating); a notification older than one already added has the day computed again.
struct RidingFigures: KindFigures {
    typealias Kind = CyclingKind

    private var followers: [String: (follower: CSCFollower, lastMs: Int64)] = [:]
    private let circumferenceM: Double
    private var wheelRevolutions = 0
    /// Whether any notification carried wheel data: without, there is no distance to give.
    private var sawWheel = false
    /// Time the wheel turned, in 1/1024 s: the spans between two wheel events with revolutions.
    private var rolling1024 = 0
    private var crankRevolutions = 0
    private var pedalling1024 = 0
    /// The fastest cadence held over at least `cadenceSpan1024`.
    private var maxCadence: Double?
    private static let cadenceSpan1024 = 1024

    init(settings: AggregateSettings) { circumferenceM = settings.sensors[CyclingKind.wheelCircumferenceMm] / 1000 }

    mutating func add(_ row: StoredCSCMeasurement) -> Bool {
        var state = followers[row.sensor] ?? (CSCFollower(), .min)
        guard row.timeMs >= state.lastMs else { return false }
        state.lastMs = row.timeMs
        // A value the bridge's check let through but this one refuses adds nothing.
        guard case .success(let measurement) = CSCMeasurement.parse(row.raw) else {
            followers[row.sensor] = state
            return true
        }
        if measurement.wheel != nil { sawWheel = true }
        let spans = state.follower.add(measurement, receivedSeconds: Double(row.timeMs) / 1000)
        followers[row.sensor] = state
        wheelRevolutions += spans.wheel.revolutions
        if case .counted(let revolutions, let time1024) = spans.wheel, revolutions > 0 { rolling1024 += time1024 }
        crankRevolutions += spans.crank.revolutions
        if case .counted(let revolutions, let time1024) = spans.crank, revolutions > 0 {
            pedalling1024 += time1024
            if time1024 >= Self.cadenceSpan1024 { maxCadence = max(maxCadence ?? 0, Double(revolutions) * 60 * 1024 / Double(time1024)) }
        }
        return true
    }

    var fields: [(String, JSONValue)] {
        // No sensor, no figures: null, not zeros (as steps).
        guard !followers.isEmpty else { return [("riding", .null)] }
        let cadence = pedalling1024 > 0 ? Double(crankRevolutions) * 60 * 1024 / Double(pedalling1024) : nil
        return [("riding", .object([
            ("distance_m", .number(Double(wheelRevolutions) * circumferenceM, digits: 1)),
            ("rolling_s", .number(Double(rolling1024) / 1024, digits: 1)),
            ("cadence_avg_rpm", .number(cadence, digits: 1)),
            ("cadence_max_rpm", .number(maxCadence, digits: 1)),
            ("pedalling_s", .number(Double(pedalling1024) / 1024, digits: 1)),
            ("wheel_revolutions", .number(wheelRevolutions)),
            ("crank_revolutions", .number(crankRevolutions)),
        ]))]
    }

}

extension CyclingKind {
    /// The entities that read the riding figures from `health/today`.
    static var entities: [DiscoveryEntity] {
        [
            DiscoveryEntity(
                component: .sensor, objectID: "riding_distance_today", name: "Riding distance today", source: .healthToday,
                template: DiscoveryTemplate.number(["riding", "distance_m"], digits: 1), deviceClass: "distance",
                stateClass: "total_increasing", unit: "m", displayPrecision: 0, icon: "mdi:bicycle", requirement: .bridge),
            DiscoveryEntity(
                component: .sensor, objectID: "riding_cadence_today", name: "Riding cadence today", source: .healthToday,
                template: DiscoveryTemplate.number(["riding", "cadence_avg_rpm"], digits: 1), stateClass: "measurement",
                unit: "rpm", displayPrecision: 0, icon: "mdi:bike", requirement: .bridge),
        ]
    }

}

extension RidingFigures {
    /// The wheel's revolutions in the window times the circumference; nil without wheel data.
    static func workoutDistanceM(_ rows: [StoredCSCMeasurement], settings: AggregateSettings) -> Double? {
        var figures = RidingFigures(settings: settings)
        for row in rows.sorted(by: { ($0.sensor, $0.timeMs) < ($1.sensor, $1.timeMs) }) { _ = figures.add(row) }
        return figures.sawWheel ? Double(figures.wheelRevolutions) * figures.circumferenceM : nil
    }
}
