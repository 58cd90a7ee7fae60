import Foundation

/// CSV for spreadsheets: one row per fix and one per valid heart-rate sample, merged in time
/// order; empty cells where a row has no such value. Times in UTC, ISO-8601.
enum CSVRows {
    static let header = "time,lat,lon,alt_m,speed_mps,hr_bpm\n"

    static func day(_ report: DayReport, engine: QueryEngine) throws -> String {
        let fixes = report.track ?? []
        let heartRates = try engine.validHeartRates(of: report.day)
        var text = ""
        var fixIndex = 0
        var heartRateIndex = 0
        while fixIndex < fixes.count || heartRateIndex < heartRates.count {
            let fix = fixIndex < fixes.count ? fixes[fixIndex].fix : nil
            let heartRate = heartRateIndex < heartRates.count ? heartRates[heartRateIndex] : nil
            if let fix, heartRate.map({ fix.timeMs <= $0.0 }) ?? true {
                let altitude = (fix.altMSL ?? fix.altHAE).map { String(format: "%.1f", $0) } ?? ""
                let speed = fix.speed.map { String(format: "%.2f", $0) } ?? ""
                text += "\(time(fix.timeMs)),\(String(format: "%.7f", fix.lat)),\(String(format: "%.7f", fix.lon)),\(altitude),\(speed),\n"
                fixIndex += 1
            } else if let heartRate {
                text += "\(time(heartRate.0)),,,,,\(heartRate.1)\n"
                heartRateIndex += 1
            }
        }
        return text
    }

    private static func time(_ ms: Int64) -> String { ISO8601.format(Date(unixMs: ms)) }
}
