import Foundation
import Testing
import TestKit

/// The day page in a real browser: scripts/page-check.sh builds the page (web/build.sh), serves it
/// from a real mosquitto's WebSockets listener under the shipped page ACL, runs the agent on a
/// replayed past day with a walk (real recordings) and drives headless Chromium through Selenium:
/// the strip, the numbers against the query reply, the map's 5-minute points, the timeline's
/// buckets, a workout's GPX read by gpxpy and its TCX checked against the schema and against
/// `keepalive export --workout`, today following health/today, the error replies and a wrong
/// password as messages, the page account's ACL, and the budget (scripts/page/page_check.py);
/// and the shipped TLS listener: wss:// with a pinned certificate (scripts/page/tls_check.py).
@Suite("The day page in a browser", .serialized)
struct PageTests {
    @Test("the page shows a past day's reply, its map, timeline and workout GPX and TCX, over ws:// and wss://, follows today, says what went wrong, and stays within its budget")
    func pageInBrowser() async throws {
        let check = try ManagedProcess(
            name: "page-check", executable: "/bin/bash", arguments: ["\(Tools.packageRoot)/scripts/page-check.sh"],
            environment: ["KEEPALIVE_BIN": Tools.agent])
        // About 80 s: the walk's replay and the agent finding the workout take most of it.
        let status = await check.waitForExit(timeout: 600)
        #expect(status == 0, "scripts/page-check.sh failed (\(String(describing: status))):\n\(check.text.suffix(8000))")
        if status == 0 {
            print(check.lines.filter { $0.hasPrefix("page-check") }.joined(separator: "\n"))
        }
    }

    /// The fleet (item 4): one ejabberd node configured as deploy/fleet's serves the page and MQTT
    /// over WebSockets; the real `keepalive archive` with a PostgreSQL of its own; the viewer
    /// account lists the device, today comes from the device, a past day's figures from the
    /// archive and the rest from the device, a day the archive does not hold from the device, the
    /// switched-off device's day from the archive alone, and the page says which answered
    /// (scripts/page/fleet_page_check.py, about 35 s).
    @Test("pointed at a fleet node with the viewer account, the page finds the device, asks the real archive for a past day and the device for the rest, and says which answered")
    func pageOnFleetNode() async throws {
        let check = try ManagedProcess(
            name: "fleet-page-check", executable: "/bin/bash", arguments: ["\(Tools.packageRoot)/scripts/page-check.sh", "--fleet"],
            environment: ["KEEPALIVE_BIN": Tools.agent])
        let status = await check.waitForExit(timeout: 600)
        #expect(status == 0, "scripts/page-check.sh --fleet failed (\(String(describing: status))):\n\(check.text.suffix(8000))")
        if status == 0 {
            print(check.lines.filter { $0.hasPrefix("fleet-page-check") }.joined(separator: "\n"))
        }
    }
}
