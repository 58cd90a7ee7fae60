import Foundation
import Testing
import TestKit

/// The files in deploy/ that configure other programs, run for real where they can be.
@Suite("Deploy files")
struct DeployFilesTests {
    /// The shipped local-broker bridge between two real brokers, run once for the four claims on it;
    /// both brokers and every client are stopped before the outcome is handed out.
    struct BridgeOutcome: Sendable {
        let forwarded: Bool
        let localLog: String
        let queuedWhileDown: Result<[MQTTSubscriber.Message], any Error>
        let discoveryRetainedUpstream: Bool
        let birthCameDown: Result<MQTTSubscriber.Message, any Error>
    }

    static let bridgeOutcome = Task { () async throws -> BridgeOutcome in
        let central = try MosquittoBroker(persistence: true)
        defer { central.stop() }
        let consumer = try await MQTTSubscriber(
            port: central.port, filter: "keepalive/#", clientID: "central-consumer-\(UInt16.random(in: 0...9999))", persistent: true)
        // The shipped file, with the test's ports and paths instead of the Pi's.
        let localPort = Ports.free()
        let directory = try TemporaryDirectory("bridge")
        let shipped = try String(contentsOfFile: "\(Tools.packageRoot)/deploy/mosquitto/keepalive-bridge.conf", encoding: .utf8)
        let config = shipped
            .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(localPort) 127.0.0.1")
            .replacingOccurrences(of: "persistence_location /var/lib/mosquitto/", with: "persistence_location \(directory.path)/")
            .replacingOccurrences(of: "address central.example.org:1883", with: "address 127.0.0.1:\(central.port)")
            .replacingOccurrences(of: "restart_timeout 5 60", with: "restart_timeout 1 2") + "\nuser root\n"
        let configPath = try directory.write("local.conf", config)
        let local = try ManagedProcess(name: "local mosquitto", executable: Tools.mosquitto, arguments: ["-c", configPath])
        defer { local.stop() }
        try await Wait.until(timeout: 10, "the local broker to listen") { Ports.isListening(localPort) }

        // The bridge connects on its own schedule: publish until one gets through (bounded).
        for attempt in 1...10 where !consumer.messages.contains(where: { $0.payload == "before" }) {
            try await MQTTTools.publish(port: localPort, topic: "keepalive/pi/location", message: "before")
            try? await Wait.until(timeout: 2, "the bridge (try \(attempt))") { consumer.messages.contains { $0.payload == "before" } }
        }
        let forwarded = consumer.messages.contains { $0.payload == "before" }
        central.stop()
        for index in 1...3 {
            try await MQTTTools.publish(port: localPort, topic: "keepalive/pi/location", message: "queued-\(index)")
        }
        try central.start()
        let queuedWhileDown = await captured {
            try await consumer.waitFor(count: 3, timeout: 30, "the three messages queued while the central broker was down") {
                $0.payload.hasPrefix("queued-")
            }
        }

        // Home Assistant on the central broker: the device's discovery configs go up, retained; its
        // birth message comes down.
        let discovery = "homeassistant/sensor/keepalive_pi/heart_rate/config"
        try await MQTTTools.publish(port: localPort, topic: discovery, message: #"{"name":"Heart rate"}"#, retain: true)
        var retainedUpstream = false
        for _ in 1...20 where !retainedUpstream {
            let homeAssistant = try await MQTTSubscriber(port: central.port, filter: "homeassistant/+/+/+/config")
            retainedUpstream = (try? await homeAssistant.waitFor(timeout: 0.5, "the retained config") { $0.retained && $0.topic == discovery }) != nil
        }
        let agentSide = try await MQTTSubscriber(port: localPort, filter: "homeassistant/status")
        try await MQTTTools.publish(port: central.port, topic: "homeassistant/status", message: "online")
        let birth = await captured { try await agentSide.waitFor("Home Assistant's birth, down the bridge") { $0.payload == "online" } }
        return BridgeOutcome(
            forwarded: forwarded, localLog: String(local.text.suffix(800)), queuedWhileDown: queuedWhileDown,
            discoveryRetainedUpstream: retainedUpstream, birthCameDown: birth)
    }

    @Test("the local-broker bridge config forwards keepalive/# upstream")
    func mosquittoBridgeForwards() async throws {
        let outcome = try await Self.bridgeOutcome.value
        #expect(outcome.forwarded, "nothing came through the bridge; local broker:\n\(outcome.localLog)")
    }

    @Test("the local-broker bridge keeps messages while the upstream broker is down")
    func mosquittoBridgeStoreAndForward() async throws {
        #expect(try await Self.bridgeOutcome.value.queuedWhileDown.get().count == 3)
    }

    @Test("the local-broker bridge sends Home Assistant discovery configs upstream, retained")
    func mosquittoBridgeDiscoveryUp() async throws {
        #expect(try await Self.bridgeOutcome.value.discoveryRetainedUpstream, "the discovery config did not reach the central broker retained")
    }

    @Test("the local-broker bridge brings Home Assistant's birth message down")
    func mosquittoBridgeBirthDown() async throws {
        _ = try await Self.bridgeOutcome.value.birthCameDown.get()
    }

    @Test("the first-boot kit puts the package, the config and a one-shot installer in place, and leaves cmdline.txt clean")
    func firstBootPlacement() async throws {
        let kit = try TemporaryDirectory("kit")
        for file in ["firstboot.sh", "install-when-online.sh", "keepalive-firstboot.service"] {
            try FileManager.default.copyItem(atPath: "\(Tools.packageRoot)/deploy/firstboot/\(file)", toPath: kit.file(file))
        }
        _ = try kit.write("keepalive_0.1.0_arm64.deb", "not really a package")
        _ = try kit.write("config.toml", "[device]\nid = \"backpack\"\n")
        _ = try kit.write("mqtt.password", "secret\n")
        _ = try kit.write("mqtt.key", "-----BEGIN PRIVATE KEY-----\n")
        _ = try kit.write("mqtt.crt", "-----BEGIN CERTIFICATE-----\n")
        for secret in ["mqtt.password", "mqtt.key"] { chmod(kit.file(secret), 0o644) }  // as on a FAT boot partition
        let root = try TemporaryDirectory("fakeroot")
        try FileManager.default.createDirectory(atPath: root.file("boot/firmware"), withIntermediateDirectories: true)
        _ = try root.write("boot/firmware/cmdline.txt",
            "console=tty1 root=PARTUUID=1 rootwait systemd.run=/boot/firmware/keepalive/firstboot.sh systemd.run_success_action=reboot systemd.unit=kernel-command-line.target\n")
        let run = try ManagedProcess(name: "firstboot", executable: "/bin/sh", arguments: [kit.file("firstboot.sh")],
                                     environment: ["KEEPALIVE_ROOT": root.path])
        #expect(await run.waitForExit(timeout: 20) == 0, "\(run.text)")
        let manager = FileManager.default
        #expect(manager.fileExists(atPath: root.file("var/lib/keepalive-firstboot/keepalive_0.1.0_arm64.deb")))
        #expect(try String(contentsOfFile: root.file("etc/keepalive/config.toml"), encoding: .utf8).contains("backpack"))
        // Where the unit's LoadCredential= reads them, root's alone; and gone from the boot partition.
        for secret in ["mqtt.password", "mqtt.key"] {
            let attributes = try manager.attributesOfItem(atPath: root.file("etc/keepalive/\(secret)"))
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(secret)")
            #expect((attributes[.ownerAccountID] as? Int) == 0, "\(secret)")
            #expect(!manager.fileExists(atPath: kit.file(secret)), "\(secret) left on the boot partition")
        }
        #expect((try manager.attributesOfItem(atPath: root.file("etc/keepalive/mqtt.crt"))[.posixPermissions] as? Int) == 0o644)
        let agentUnit = try String(contentsOfFile: "\(Tools.packageRoot)/deploy/keepalive.service", encoding: .utf8)
        #expect(agentUnit.contains("LoadCredential=mqtt.password:/etc/keepalive/mqtt.password"))
        #expect(agentUnit.contains("LoadCredential=mqtt.key:/etc/keepalive/mqtt.key"))
        #expect(manager.isExecutableFile(atPath: root.file("usr/local/sbin/keepalive-install-when-online")))
        #expect(try manager.destinationOfSymbolicLink(atPath: root.file("etc/systemd/system/multi-user.target.wants/keepalive-firstboot.service"))
            == "/etc/systemd/system/keepalive-firstboot.service")
        let cmdline = try String(contentsOfFile: root.file("boot/firmware/cmdline.txt"), encoding: .utf8)
        #expect(cmdline == "console=tty1 root=PARTUUID=1 rootwait\n")
        // The one-shot unit is a valid unit (its ExecStart pointed at where the kit put the script).
        let unitDirectory = try TemporaryDirectory("unit")
        let unit = try String(contentsOfFile: root.file("etc/systemd/system/keepalive-firstboot.service"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/sbin/", with: root.file("usr/local/sbin/"))
        let unitPath = try unitDirectory.write("keepalive-firstboot.service", unit)
        let verify = try ManagedProcess(name: "verify", executable: Tools.find("systemd-analyze"), arguments: ["verify", unitPath])
        #expect(await verify.waitForExit(timeout: 30) == 0, "\(verify.text)")
    }
}
