import ArgumentParser
import Store

/// `sileme-notifier migrate`: creates or upgrades the schema; safe to run again.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create or upgrade the database schema (idempotent; existing rows are never changed).")

    @OptionGroup var common: CommonOptions

    func run() throws {
        let configuration = try common.loadConfiguration()
        try Console.exitOnFailure {
            let migrator = try Migrator(directory: configuration.migrationsDirectory)
            let db = try PGConnection(configuration.databaseURL)
            let applied = try migrator.migrate(db)
            Console.error(applied.isEmpty ? "schema is current" : "applied: " + applied.joined(separator: ", "))
            return .success
        }
    }
}
