import Values

/// The database's slice of the configuration: where the notifier's sessions connect, and in which
/// schema. The one part of the settings the Store target is given — it never sees the rest, so
/// nothing below Delivery can come to depend on a mail or page setting by accident.
package struct DatabaseSettings: Sendable {
    /// `DATABASE_URL`: a libpq connection string or URI; empty means libpq's `PG*` defaults.
    package var url: Secret
    /// `DATABASE_READ_URL`: a hot standby the read-only reports read from; nil reads the primary.
    package var standbyURL: Secret?
    /// `DATABASE_LISTEN_URL`: a direct connection for `LISTEN` where `url` goes through a pooler.
    package var listenURL: Secret?
    /// `DATABASE_SCHEMA`: where the notifier's own tables and functions live.
    package var schema: DatabaseSchema

    /// Where the read-only reports (the dry run, `--preview`, `report`) read: the standby, else
    /// the primary.
    package var readURL: Secret { standbyURL ?? url }

    package init(url: Secret, standbyURL: Secret? = nil, listenURL: Secret? = nil, schema: DatabaseSchema = .standard) {
        self.url = url
        self.standbyURL = standbyURL
        self.listenURL = listenURL
        self.schema = schema
    }
}

extension NotifierConfiguration {
    /// The database's slice (`DATABASE_URL`, `DATABASE_READ_URL`, `DATABASE_LISTEN_URL`,
    /// `DATABASE_SCHEMA`), for the Store target.
    package var database: DatabaseSettings {
        DatabaseSettings(url: databaseURL, standbyURL: databaseReadURL, listenURL: databaseListenURL, schema: databaseSchema)
    }
}
