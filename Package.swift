// swift-tools-version:6.0
import PackageDescription

// The targets follow the flow of a run — rule → store → mail → delivery → daemon — with the
// reports and the admin tools beside it. A target may import only what it names below, so the
// layering is the compiler's to enforce (docs/architecture.md draws it).
let package = Package(
    name: "sileme-notifier",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "sileme-notifier", targets: ["sileme-notifier"]),
        .library(name: "SilemeNotifier",
                 targets: ["Values", "Output", "Rule", "Config", "Store", "Mail", "Webhook", "Systemd", "Delivery", "Reports", "Admin", "Daemon",
                          "Acknowledgement", "AckPage", "Hashing", "Bounce", "Texts"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // C libraries from Debian, and one shim for what Swift cannot call or does not import
        // (libcurl's variadic functions, timerfd and eventfd).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // OpenSSL's libcrypto (already loaded through libcurl), under the Hashing target.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // The project's hashes over libcrypto: HMAC-SHA256 (the webhook's signatures, the
        // acknowledgement links' tokens) and SHA-256 (the page's Content-Security-Policy).
        .target(name: "Hashing", dependencies: ["CCrypto"]),
        .target(name: "CShims", dependencies: ["CCurl"]),
        // One libcurl handle with the process-wide setup, the error buffer and the stop-aware
        // transfer loop that the SMTP and the webhook transports share.
        .target(name: "Curl", dependencies: ["Values", "CShims"]),

        // Values without C: dates, times, secrets, addresses, names, exit codes, the stop signal.
        .target(name: "Values"),
        // Text for people and programs: CSV, JSON and HTML escaping (by scalar), terminal columns.
        .target(name: "Output"),
        // The alert rule, pure: who is due on a date and why.
        .target(name: "Rule", dependencies: ["Values"]),
        // The typed configuration, read and validated once (the webhook's body template is parsed there).
        .target(name: "Config", dependencies: [
            "Values", "Rule", "CLibPQ", .product(name: "Mustache", package: "swift-mustache"),
        ]),
        // PostgreSQL: the connection, the migrations, and the SQL of every table the notifier uses.
        // current-functions.sql: every function and trigger as the migrations leave them (read, not run).
        .target(name: "Store", dependencies: ["Values", "Rule", "Config", "CLibPQ"],
                exclude: ["current-functions.sql"], resources: [.copy("Migrations")]),
        // The acknowledgement links (docs/acknowledgement.md): the signed token that names user, streak and contact,
        // its key, and the link a message carries. Mail, the webhook and the page share it.
        .target(name: "Acknowledgement", dependencies: ["Values", "Config", "Hashing"]),
        // The bounces (SPEC §16, docs/bounces.md), pure parts: the signed VERP tag of a delivery row, the
        // RFC 3464 / RFC 5965 report parser over a small MIME reader, and the mailboxes that hold them
        // (a Maildir; IMAP through libcurl).
        .target(name: "Bounce", dependencies: ["Values", "Config", "Hashing", "Curl", "CShims"]),
        // The texts of every language, in one folder per language (docs/languages.md): the shipped ones
        // built in (generated from config/templates/<language>/) and an operator's TEMPLATE_DIR; the
        // mail templates and the page's texts (page.texts) are read from them.
        .target(name: "Texts", dependencies: [
            "Values", "Config", .product(name: "Mustache", package: "swift-mustache"),
        ]),
        // The message (templates, MIME) and the transports that carry it (SMTP, outbox).
        .target(name: "Mail", dependencies: [
            "Values", "Output", "Rule", "Config", "CShims", "Curl", "Acknowledgement", "Texts",
            .product(name: "Mustache", package: "swift-mustache"),
        ]),
        // The webhook channel: the event and its JSON body, the body template, the Standard Webhooks
        // signature, and the transport that POSTs it (libcurl).
        .target(name: "Webhook", dependencies: [
            "Values", "Output", "Config", "CShims", "Curl", "Hashing",
            .product(name: "Mustache", package: "swift-mustache"),
        ]),
        // systemd: sd_notify, the journal, the typed events.
        .target(name: "Systemd", dependencies: ["Values", "CSystemd", .product(name: "Logging", package: "swift-log")]),
        // One run: evaluate, claim, send (mail and webhook), record.
        .target(name: "Delivery", dependencies: [
            "Values", "Rule", "Config", "Store", "Mail", "Webhook", "Systemd", "Bounce", "Hashing",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The dry run (a run's plan, printed) and the history report.
        .target(name: "Reports", dependencies: [
            "Values", "Output", "Rule", "Config", "Store", "Delivery", "Mail",
        ]),
        // check (with the webhook's signed ping), --preview, retry.
        .target(name: "Admin", dependencies: [
            "Values", "Output", "Rule", "Config", "Store", "Mail", "Webhook", "Delivery", "Texts", .product(name: "Logging", package: "swift-log"),
        ]),
        // The acknowledgement page (docs/acknowledgement.md): the page, its words, and the HTTP listener that
        // serves it (Hummingbird, so no hand-written parser faces the internet's requests).
        .target(name: "AckPage", dependencies: [
            "Values", "Output", "Config", "Store", "Systemd", "Hashing", "Acknowledgement", "Texts",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The long-running daemon: its parts as services of one group, the schedule, the
        // next-action decision, the wait.
        .target(name: "Daemon", dependencies: [
            "Values", "Config", "Store", "Mail", "Systemd", "Delivery", "CShims", "AckPage", "Texts",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(
            name: "sileme-notifier",
            dependencies: [
                "Values", "Output", "Rule", "Config", "Store", "Mail", "Webhook", "Systemd", "Delivery", "Reports", "Admin", "Daemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Parsers the tests of both test targets use (CSV, the reports' SVG charts).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SilemeNotifierTests", dependencies: [
            "Values", "Output", "Rule", "Config", "Store", "Mail", "Webhook", "Systemd", "Delivery", "Reports", "Admin", "Daemon",
            "Acknowledgement", "AckPage", "Hashing", "Bounce", "Texts", "TestSupport", .product(name: "Logging", package: "swift-log"),
        ], resources: [.copy("Fixtures")]),
        .testTarget(name: "IntegrationTests", dependencies: [
            "Values", "Output", "Rule", "Config", "Store", "Mail", "Webhook", "Systemd", "Delivery", "Reports", "Admin", "Daemon",
            "Acknowledgement", "AckPage", "Bounce", "Texts", "TestSupport", .product(name: "Logging", package: "swift-log"),
        ], exclude: ["Support/webhook_receiver.py"]),
    ]
)
