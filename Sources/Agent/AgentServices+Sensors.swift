import Bus
import Foundation
import Logging
import ServiceLifecycle

extension AgentServices {
    /// The heart-rate strap's service on the configured transport, and the GPS's, where enabled.
    static func sensors(config: AgentConfig, client: MQTTClient, ingest: SensorWiring, location: LocationPublisher) -> [any Service] {
        var sensors: [any Service] = []
        if let source = heartRateSource(config: config, client: client, counters: ingest.counters) {
            sensors.append(BridgeService(
                source: source, writer: ingest.writer, board: ingest.board, counters: ingest.counters, clock: ingest.clock,
                stallTimeoutS: config.hr.stallTimeoutS, reacquireMaxS: config.hr.reacquireMaxS,
                topicRoot: config.topicRoot, heartbeats: ingest.heartbeats,
                logger: Logger(label: "keepalive.hr")))
        }
        if config.gps.enabled {
            let reader = GPSReader(
                host: config.gps.host, port: config.gps.port, fixTimeout: config.gps.fixTimeoutS,
                backoffMax: config.gps.reconnectMaxS, clock: ingest.clock, dropped: ingest.counters.gpsDropped,
                logger: Logger(label: "keepalive.gps"))
            sensors.append(GPSService(
                reader: reader, writer: ingest.writer, board: ingest.board, counters: ingest.counters, clock: ingest.clock,
                maxRateHz: config.gps.maxRateHz, topicRoot: config.topicRoot, onFirstFix: { await location.firstFix() },
                heartbeats: ingest.heartbeats, logger: Logger(label: "keepalive.gps")))
        }
        return sensors
    }

    /// Where the strap's bridge messages come from (`[hr] transport`); nil without a strap.
    private static func heartRateSource(config: AgentConfig, client: MQTTClient, counters: IngestCounters) -> (any BridgeTransport)? {
        switch config.hr.transport {
        case .udp:
            return UDPLineSource(port: config.hr.udpPort, maxLineBytes: config.hr.maxLineBytes, dropped: counters.heartRateDropped)
        case .mqtt:
            let bridge = MQTTBridgeSource(
                filter: config.hr.topic, client: client, maxLineBytes: config.hr.maxLineBytes, dropped: counters.heartRateDropped)
            // On the network thread itself: when the bridge's messages wait there, TCP and the
            // broker hold the backlog (see MQTTBridgeSource).
            for filter in [bridge.measurementFilter, bridge.statusFilter] {
                client.handleOnNetworkThread(filter) { bridge.deliver($0) }
            }
            return bridge
        case .command:
            return CommandLineSource(
                argv: config.hr.command, maxLineBytes: config.hr.maxLineBytes, restartMaxS: config.hr.reacquireMaxS,
                logger: Logger(label: "keepalive.hr"))
        case .serial:
            return SerialLineSource(
                path: config.hr.serialDevice, baud: config.hr.baud, maxLineBytes: config.hr.maxLineBytes,
                reopenMaxS: config.hr.reacquireMaxS, logger: Logger(label: "keepalive.hr"))
        case .none:
            return nil
        }
    }
}
