import Foundation

/// GeoJSON (RFC 7946): one Feature per day, its geometry the day's track (a LineString; a Point
/// for a single fix; null without fixes), its properties the date, the health aggregate, and the
/// fix times and heart rates alongside the coordinates (`coordTimes`, as togeojson writes them).
enum GeoJSONDocument {
    static func collection(_ reports: [DayReport]) -> JSONValue {
        .object([("type", "FeatureCollection"), ("features", .array(reports.map(feature)))])
    }

    static func feature(_ report: DayReport) -> JSONValue {
        let points = report.track ?? []
        let coordinates: [JSONValue] = points.map { point in
            var position: [JSONValue] = [.number(point.fix.lon, digits: 7), .number(point.fix.lat, digits: 7)]
            if let altitude = point.fix.altMSL ?? point.fix.altHAE { position.append(.number(altitude, digits: 1)) }
            return .array(position)
        }
        let geometry: JSONValue =
            switch coordinates.count {
            case 0: .null
            case 1: .object([("type", "Point"), ("coordinates", coordinates[0])])
            default: .object([("type", "LineString"), ("coordinates", .array(coordinates))])
            }
        var properties: [(String, JSONValue)] = [
            ("date", .string(report.day.description)), ("tz", .string(report.zoneName)), ("has_data", .bool(report.hasData)),
        ]
        if report.health != .null { properties.append(("health", report.health)) }
        properties.append(("coordTimes", .array(points.map { .string(ISO8601.format(Date(unixMs: $0.fix.timeMs))) })))
        properties.append(("heart_rates", .array(points.map { .number($0.heartRate) })))
        return .object([("type", "Feature"), ("geometry", geometry), ("properties", .object(properties))])
    }
}
