import Foundation
import FoundationXML
import Testing
import TestKit

@testable import Store

/// The day's track in every format, asked once from one agent (QueryTests.Setup) over MQTT and
/// exported on the command line; each test states one claim on the documents. The scenario stops
/// the agent and the broker before its outcome is handed out.
@Suite("Queries: formats", .serialized)
struct QueryFormatsTests {
    typealias Run = (status: Int32?, output: String, errors: String)

    struct Outcome: Sendable {
        let day: String
        let fixes: [StoredFix]
        let heartRates: [StoredHeartRate]
        let gpx: Result<String, any Error>
        let geojson: Result<String, any Error>
        /// `keepalive export` of the day and the empty day before it, by format.
        let exports: [String: Run]
        let exitStatus: Int32?
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let setup = try await QueryTests.Setup.make()
        defer { setup.agent.kill9(); setup.broker.stop() }
        let gpx = await captured { try await setup.request(#"{"date":"\#(setup.day)","format":"gpx","track":"full"}"#, extra: ["-W", "20"]) }
        let geojson = await captured { try await setup.request(#"{"date":"\#(setup.day)","format":"geojson"}"#) }
        // Export: two days, the first empty; a progress line per day on stderr.
        let first = setup.day.previous
        var exports: [String: Run] = [:]
        for format in ["gpx", "geojson", "csv"] {
            exports[format] = try await setup.query(["export", "--from", "\(first)", "--to", "\(setup.day)", "--format", format])
        }
        return Outcome(
            day: setup.day.description, fixes: setup.fixes, heartRates: setup.heartRates, gpx: gpx, geojson: geojson, exports: exports,
            exitStatus: setup.agent.stop())
    }

    static func attribute(_ element: XMLElement, _ name: String) -> String? { QueryTests.attribute(element, name) }

    @Test("GPX validates as XML and round-trips positions and heart rate")
    func gpx() async throws {
        let outcome = try await Self.outcome.value
        let document = try XMLDocument(data: Data(try outcome.gpx.get().utf8), options: [])
        let root = try #require(document.rootElement())
        #expect(root.name == "gpx" && Self.attribute(root, "version") == "1.1")
        #expect(root.uri == "http://www.topografix.com/GPX/1/1")
        let points = try root.nodes(forXPath: "//*[local-name()='trkpt']").compactMap { $0 as? XMLElement }
        #expect(points.count == outcome.fixes.count)
        let heartRates = Dictionary(outcome.heartRates.map { ($0.timeMs, $0.bpm) }, uniquingKeysWith: { a, _ in a })
        var withHeartRate = 0
        for (point, fix) in zip(points, outcome.fixes) {
            #expect(abs((Double(Self.attribute(point, "lat") ?? "") ?? 0) - fix.lat) < 1e-7)
            #expect(abs((Double(Self.attribute(point, "lon") ?? "") ?? 0) - fix.lon) < 1e-7)
            if let hr = try point.nodes(forXPath: ".//*[local-name()='hr']").first?.stringValue {
                withHeartRate += 1
                // The fixture's samples are on whole seconds, as the fixes are: the nearest is the same second.
                if let expected = heartRates[fix.timeMs] { #expect(Int(hr) == expected) }
            }
        }
        #expect(withHeartRate >= outcome.heartRates.count - 1)
    }

    @Test("GeoJSON carries the 5-minute track as a LineString, lon before lat")
    func geojson() async throws {
        let geojson = QueryTests.object(try await Self.outcome.value.geojson.get())
        #expect(geojson["type"] as? String == "FeatureCollection")
        let feature = try #require((geojson["features"] as? [[String: Any]])?.first)
        let geometry = try #require(feature["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        #expect((geometry["coordinates"] as? [[Double]])?.count == 12)
        #expect((geometry["coordinates"] as? [[Double]])?.first?[0] == 13.4, "GeoJSON is lon, lat")
    }

    @Test("export writes several days as GPX, GeoJSON and CSV, with a progress line per day", arguments: ["gpx", "geojson", "csv"])
    func export(format: String) async throws {
        let outcome = try await Self.outcome.value
        let export = try #require(outcome.exports[format])
        #expect(export.status == 0, "\(export.errors)")
        #expect(export.errors.contains("exporting \(outcome.day) (2/2 days"), "\(export.errors)")
        switch format {
        case "gpx":
            let exported = try XMLDocument(data: Data(export.output.utf8), options: [])
            #expect(try exported.nodes(forXPath: "//*[local-name()='trk']").count == 2)
            #expect(try exported.nodes(forXPath: "//*[local-name()='trkpt']").count == outcome.fixes.count)
        case "geojson":
            #expect((QueryTests.object(export.output)["features"] as? [Any])?.count == 2)
        default:
            let rows = export.output.split(separator: "\n")
            #expect(rows.first == "time,lat,lon,alt_m,speed_mps,hr_bpm")
            #expect(rows.count == 1 + outcome.fixes.count + outcome.heartRates.count)
        }
    }

    @Test("the agent stops cleanly (exit 0) after answering in every format")
    func cleanStop() async throws {
        #expect(try await Self.outcome.value.exitStatus == 0)
    }
}
