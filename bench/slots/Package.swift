// swift-tools-version:6.0
import PackageDescription

// The daemon's schedule computations over the slots, alone: `Values` and `Rule` of the
// product (symbolic links to its sources), built in release by `bench/bench.sh slots`.
let package = Package(
    name: "slots-bench",
    targets: [
        .target(name: "Values"),
        .target(name: "Rule", dependencies: ["Values"]),
        .executableTarget(name: "SlotsBench", dependencies: ["Rule", "Values"]),
    ]
)
