import Agent
import ArgumentParser

@main
struct KeepAliveMain {
    static func main() async {
        // The explicit `nil` picks AsyncParsableCommand's async entry point over the sync one.
        await KeepAliveCommand.main(nil)
    }
}
