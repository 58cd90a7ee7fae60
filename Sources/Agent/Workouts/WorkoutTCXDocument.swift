import Foundation

/// One workout as Garmin Training Center Database v2 (TCX), what Strava and Garmin Connect import
/// with heart rate and laps: one Lap per km split and one for the rest. Every element is written
/// in the order the XSD's sequences give; a consumer that validates refuses any other.
enum WorkoutTCXDocument {
    static func document(_ summary: WorkoutExportSummary, points: [WorkoutTrackPoint], creator: String) -> String {
        // No whitespace before the declaration: Strava refuses a TCX file that starts with any.
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 \
            http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
            <Activities>
            <Activity Sport="\(sport(summary.sport))">
            <Id>\(ExportText.time(summary.startMs))</Id>

            """
        text.reserveCapacity(text.utf8.count + points.count * 330)
        for lap in Lap.laps(summary, points: points) { text += self.lap(lap, sport: summary.sport) }
        // Activity_t: Id, Lap+, Notes?, Training?, Creator?, Extensions?. The creator is abstract
        // in the schema; Device_t is the form whose Name Garmin Connect and Strava show, and its
        // numbers are required, so zeros stand for "not a Garmin product".
        let name = ExportText.escape(creator).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if !name.isEmpty {
            text += "<Creator xsi:type=\"Device_t\"><Name>\(name)</Name><UnitId>0</UnitId><ProductID>0</ProductID>"
            text += "<Version><VersionMajor>0</VersionMajor><VersionMinor>0</VersionMinor></Version></Creator>\n"
        }
        return text + "</Activity>\n</Activities>\n</TrainingCenterDatabase>\n"
    }

    /// Sport_t allows only these three; a walk is "Other", as Garmin's own exports write it.
    static func sport(_ sport: String) -> String {
        switch sport {
        case "run": return "Running"
        case "cycle": return "Biking"
        default: return "Other"
        }
    }

    private static func lap(_ lap: Lap, sport: String) -> String {
        // ActivityLap_t: TotalTimeSeconds, DistanceMeters, MaximumSpeed?, Calories,
        // AverageHeartRateBpm?, MaximumHeartRateBpm?, Intensity, Cadence?, TriggerMethod, Track*.
        var text = "<Lap StartTime=\"\(ExportText.time(lap.startMs))\">"
        text += "<TotalTimeSeconds>\(ExportText.fixed(Double(lap.endMs - lap.startMs) / 1000, 3))</TotalTimeSeconds>"
        text += "<DistanceMeters>\(ExportText.fixed(lap.distanceM, 2))</DistanceMeters>"
        // Required by the schema; the agent has no energy model, and 0 lets the consumer estimate.
        text += "<Calories>0</Calories>"
        let heartRates = lap.points.compactMap { ExportText.heartRate($0.heartRate) }
        if let maximum = heartRates.max() {
            let average = Int((Double(heartRates.reduce(0, +)) / Double(heartRates.count)).rounded())
            text += "<AverageHeartRateBpm><Value>\(average)</Value></AverageHeartRateBpm>"
            text += "<MaximumHeartRateBpm><Value>\(maximum)</Value></MaximumHeartRateBpm>"
        }
        text += "<Intensity>Active</Intensity>"
        text += "<TriggerMethod>\(lap.byDistance ? "Distance" : "Manual")</TriggerMethod>\n"
        let trackpoints = lap.points.map { trackpoint($0, sport: sport) }.joined()
        // Track_t needs at least one Trackpoint: a lap without samples has no Track at all.
        if !trackpoints.isEmpty { text += "<Track>\n\(trackpoints)</Track>\n" }
        return text + "</Lap>\n"
    }

    private static func trackpoint(_ point: WorkoutTrackPoint, sport: String) -> String {
        // Trackpoint_t: Time, Position?, AltitudeMeters?, DistanceMeters?, HeartRateBpm?,
        // Cadence?, SensorState?, Extensions?. A point without a usable position still carries
        // its time and heart rate, which the schema allows.
        var text = "<Trackpoint><Time>\(ExportText.time(point.timeMs))</Time>"
        if let position = ExportText.position(lat: point.lat, lon: point.lon) {
            text += "<Position><LatitudeDegrees>\(position.lat)</LatitudeDegrees><LongitudeDegrees>\(position.lon)</LongitudeDegrees></Position>"
        }
        if let altitude = ExportText.finite(point.altitudeM) {
            text += "<AltitudeMeters>\(ExportText.fixed(altitude, 1))</AltitudeMeters>"
        }
        if let distance = ExportText.finite(point.distanceM), distance >= 0 {
            text += "<DistanceMeters>\(ExportText.fixed(distance, 2))</DistanceMeters>"
        }
        if let heartRate = ExportText.heartRate(point.heartRate) {
            text += "<HeartRateBpm><Value>\(heartRate)</Value></HeartRateBpm>"
        }
        // The plain Cadence element is a bike's crank rate to Garmin Connect; feet go in the
        // ActivityExtension's RunCadence, as Garmin's own running files carry it.
        if let cadence = ExportText.footCadence(point.cadence, sport: sport) {
            text += "<Extensions><ns3:TPX><ns3:RunCadence>\(cadence)</ns3:RunCadence></ns3:TPX></Extensions>"
        }
        return text + "</Trackpoint>\n"
    }
}

extension WorkoutTCXDocument {
    /// A lap of the document: one per completed km, then the rest, each with the points inside it.
    struct Lap: Sendable, Equatable {
        var startMs: Int64
        var endMs: Int64
        var distanceM: Double
        /// True for a lap closed by its km; the last one is closed by the end of the workout.
        var byDistance: Bool
        var points: ArraySlice<WorkoutTrackPoint>

        /// Splits outside the workout or out of order are dropped rather than written as laps of
        /// negative length. A completed km lap is 1000 m by the agent's own distance; the last lap
        /// is what remains of the summary's distance, so the laps add up to the summary.
        static func laps(_ summary: WorkoutExportSummary, points: [WorkoutTrackPoint]) -> [Lap] {
            var bounds = [summary.startMs]
            for end in summary.splitEndsMs.sorted() where end > (bounds.last ?? summary.startMs) && end < summary.endMs {
                bounds.append(end)
            }
            let completed = bounds.count - 1
            bounds.append(max(summary.endMs, summary.startMs))
            let total = summary.distanceM.isFinite ? max(0, summary.distanceM) : 0
            let sorted = points.sorted { $0.timeMs < $1.timeMs }
            var laps: [Lap] = []
            var next = sorted.startIndex
            for index in 0...completed {
                // Points before the start go to the first lap and any after the end to the last,
                // so that no sample is lost to a clock step at either edge.
                let isLast = index == completed
                let first = next
                while next < sorted.endIndex, isLast || sorted[next].timeMs < bounds[index + 1] { next += 1 }
                laps.append(Lap(
                    startMs: bounds[index], endMs: bounds[index + 1],
                    distanceM: isLast ? max(0, total - 1000 * Double(completed)) : 1000,
                    byDistance: !isLast, points: sorted[first..<next]))
            }
            return laps
        }
    }
}
