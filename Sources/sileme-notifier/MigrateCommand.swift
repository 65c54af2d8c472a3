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
            let db = try PGConnection(configuration.database)
            let outcome = try migrator.migrate(db)
            Console.error(outcome.applied.isEmpty ? "schema is current" : "applied: " + outcome.applied.joined(separator: ", "))
            if !outcome.moved.isEmpty {
                // An older installation kept these beside the app's tables, where an API may serve them.
                Console.error("moved into schema \(db.schema) with their rows and grants (out of the app's schema): "
                              + outcome.moved.joined(separator: ", "))
            }
            if !outcome.reinstalledTriggers.isEmpty {
                // The app replaced check_ins (partitioned it) since the last migrate.
                Console.error("check_ins had lost the notifier's triggers (replaced since the last migrate): installed "
                              + outcome.reinstalledTriggers.joined(separator: ", ") + ", and the last check-ins rebuilt from the table")
            }
            return .success
        }
    }
}
