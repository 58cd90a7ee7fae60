import Foundation

extension DayReport {
    /// The day's track as one GPX `<trk>` named by the date (`GPXWriter`), heart rate on each point
    /// that has one near it.
    var gpxTrack: String {
        let points = (track ?? []).lazy.map { point in
            GPXWriter.Point(
                timeMs: point.fix.timeMs, lat: point.fix.lat, lon: point.fix.lon, elevationM: point.fix.altMSL ?? point.fix.altHAE,
                heartRate: point.heartRate)
        }
        return GPXWriter.track(name: "\(day)", points: points)
    }
}
