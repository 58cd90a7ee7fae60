import Foundation
import Testing
import TestKit

/// Home Assistant itself reads the agent's discovery: scripts/ha-check.sh runs a real Home
/// Assistant 2024.3.3 (in a venv it makes once in ~/.cache/keepalive/) against a real mosquitto
/// and the agent fed by the bundled GPS capture and heart-rate hour, and asserts through HA's
/// registries and state machine (scripts/homeassistant/ha_check.py lists what).
@Suite("Home Assistant itself")
struct HomeAssistantCheckTests {
    @Test("a real Home Assistant shows the device with its tracker and sensors, the agent's values, unknown for figures not yet published, unavailable after the will, and drops entities a config turns off")
    func homeAssistantCheck() async throws {
        let check = try ManagedProcess(
            name: "ha-check", executable: "/bin/bash", arguments: ["\(Tools.packageRoot)/scripts/ha-check.sh"],
            environment: ["KEEPALIVE_BIN": Tools.agent])
        // Up to a few minutes the first time (the venv from PyPI); about 20 s after.
        let status = await check.waitForExit(timeout: 1200)
        #expect(status == 0, "scripts/ha-check.sh failed (\(String(describing: status))):\n\(check.text.suffix(8000))")
        if status == 0 {
            print(check.lines.filter { $0.hasPrefix("ha-check") || $0.contains("keepalive_hacheck") }.joined(separator: "\n"))
        }
    }
}
