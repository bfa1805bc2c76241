// swift-tools-version: 6.1
// SPDX-License-Identifier: Apache-2.0
// Benchmarks for shaked, run with `make bench` (or `swift package benchmark` in this folder). Release builds only.
import PackageDescription

let package = Package(
    name: "ShakedBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "shaked", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        // epoll(7) for the latency rig's reader (Swift's Glibc module leaves it out).
        .systemLibrary(name: "CEpoll", path: "Sources/CEpoll"),
        .executableTarget(
            name: "DetectorThroughput",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ShakeDetection", package: "shaked"),
                .product(name: "ShakeTrace", package: "shaked"),
            ],
            path: "Benchmarks/DetectorThroughput",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "EventLatency",
            dependencies: [
                "CEpoll",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ShakeServer", package: "shaked"),
                .product(name: "ShakeClient", package: "shaked"),
                .product(name: "ShakeProtocol", package: "shaked"),
                .product(name: "ShakeDetection", package: "shaked"),
            ],
            path: "Benchmarks/EventLatency",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
