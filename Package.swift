// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "sileme-notifier",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "sileme-notifier", targets: ["sileme-notifier"]),
        .library(name: "SilemeNotifier", targets: ["SilemeNotifier"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        // Typed wrappers for libcurl's variadic functions, which Swift cannot call.
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        .target(
            name: "SilemeNotifier",
            dependencies: [
                "CLibPQ", "CCurlShim", "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.copy("Store/Migrations")]),
        .executableTarget(
            name: "sileme-notifier",
            dependencies: [
                "SilemeNotifier",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Parsers the tests of both test targets use (CSV, the reports' SVG charts).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SilemeNotifierTests", dependencies: ["SilemeNotifier", "TestSupport"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["SilemeNotifier", "TestSupport", .product(name: "Logging", package: "swift-log")]),
    ]
)
