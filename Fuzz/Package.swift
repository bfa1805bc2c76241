// swift-tools-version: 6.1
// SPDX-License-Identifier: Apache-2.0
// libFuzzer targets for shaked's parsers, one executable each. Build and run them with `make fuzz` (or
// scripts/fuzz.sh); docs/fuzzing.md explains what each checks. Instrumented builds only: see scripts/fuzz.sh.
import PackageDescription

let package = Package(
    name: "ShakedFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "shaked", path: ".."),
        // The same package the root depends on; named here for NIOEmbedded, which drives LineFrameDecoder.
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // Invariant checks and input helpers shared by the fuzzers.
        .target(name: "FuzzSupport"),
        // JSON values, request lines, server lines and line framing (ShakeProtocol).
        .executableTarget(
            name: "FuzzProtocol",
            dependencies: [
                "FuzzSupport",
                .product(name: "ShakeProtocol", package: "shaked"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        // The trace CSV parser and writer (ShakeTrace).
        .executableTarget(
            name: "FuzzTrace",
            dependencies: [
                "FuzzSupport",
                .product(name: "ShakeTrace", package: "shaked"),
                .product(name: "ShakeDetection", package: "shaked"),
            ]
        ),
        // The YAML configuration file (ShakeConfig).
        .executableTarget(
            name: "FuzzConfig",
            dependencies: [
                "FuzzSupport",
                .product(name: "ShakeConfig", package: "shaked"),
                .product(name: "ShakeDetection", package: "shaked"),
            ]
        ),
        // IIO scan type strings, scan layouts and the scan decoder (IIOModel).
        .executableTarget(
            name: "FuzzScan",
            dependencies: ["FuzzSupport", .product(name: "IIOModel", package: "shaked")]
        ),
    ]
)
