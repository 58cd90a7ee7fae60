import Foundation

/// What every sensor service is handed: where its samples go, where it reports its state, what it
/// counts, the heartbeat the watchdog reads, the agent's clock.
struct SensorWiring {
    let writer: SampleWriter
    let board: SensorBoard
    let counters: IngestCounters
    let heartbeats: LoopHeartbeats
    let clock: AgentClock
}
