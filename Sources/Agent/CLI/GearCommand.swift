import ArgumentParser
import Foundation
import Store

/// `keepalive gear add|list|select|retire|assign`: shoes and the runs credited to them. Changes
/// go through the running agent (`cmd/gear`), which publishes them; `list` reads the store.
struct GearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gear",
        abstract: "Register, list, select, retire shoes and assign runs to them.",
        subcommands: [Add.self, List.self, Select.self, Retire.self, Assign.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a pair (or change its name and limits).")
        @OptionGroup var options: CommonOptions
        @Option(help: "Its name, e.g. \"Pegasus 41\".") var name: String
        @Option(help: "Its id (letters, digits, - and _); default: made from the name.") var id: String?
        @Option(help: "Kilometres it had before KeepAlive counted.") var startKm: Double = 0
        @Option(help: "Kilometres it is good for: announced at 80 % and 100 %.") var limitKm: Double?

        func run() throws {
            var body: [(String, JSONValue)] = [("op", "add"), ("name", .string(name)), ("start_km", .number(startKm))]
            if let id { body.append(("id", .string(id))) }
            if let limitKm { body.append(("limit_km", .number(limitKm))) }
            try AgentCommandClient.finish(try AgentCommandClient.send(config: try options.loadConfig(), command: "gear", body: .object(body)))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every pair as JSON, one per line (from the local store).")
        @OptionGroup var options: CommonOptions

        func run() throws {
            let config = try options.loadConfig()
            let reader = try StoreReader(path: config.store.path)
            for gear in try reader.read({ try $0.allGear() }) {
                print(JSONValue.object(GearBook.json(gear)).text)
            }
        }
    }

    struct Select: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Credit new runs to this pair.")
        @OptionGroup var options: CommonOptions
        @Argument(help: "The pair's id.") var id: String

        func run() throws {
            try AgentCommandClient.finish(
                try AgentCommandClient.send(config: try options.loadConfig(), command: "gear", body: .object([("op", "select"), ("id", .string(id))])))
        }
    }

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Retire a pair: it keeps its history, new runs go elsewhere.")
        @OptionGroup var options: CommonOptions
        @Argument(help: "The pair's id.") var id: String

        func run() throws {
            try AgentCommandClient.finish(
                try AgentCommandClient.send(config: try options.loadConfig(), command: "gear", body: .object([("op", "retire"), ("id", .string(id))])))
        }
    }

    struct Assign: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Credit a workout to a pair (moving it from another), or to none.")
        @OptionGroup var options: CommonOptions
        @Argument(help: "The workout's id (keepalive workouts).") var workout: String
        @Argument(help: "The pair's id; leave out to take the workout's credit away.") var id: String?

        func run() throws {
            try AgentCommandClient.finish(try AgentCommandClient.send(
                config: try options.loadConfig(), command: "gear",
                body: .object([("op", "assign"), ("workout", .string(workout)), ("id", id.map { .string($0) } ?? .null)])))
        }
    }
}
