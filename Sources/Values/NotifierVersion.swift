/// The notifier's version: what `--version` prints, what `check` reports and what every run's
/// `run_started` event carries (`NOTIFIER_VERSION`), so the journal says which build sent a mail.
package enum NotifierVersion {
    /// The release, as `MAJOR.MINOR.PATCH`.
    package static let current = "0.3.0"
}
