// swift-tools-version: 6.1
// SPDX-License-Identifier: Apache-2.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "shaked",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ShakeDetection", targets: ["ShakeDetection"]),
        .library(name: "ShakeTrace", targets: ["ShakeTrace"]),
        .library(name: "ShakeClient", targets: ["ShakeClient"]),
        .library(name: "ShakeServer", targets: ["ShakeServer"]),
        .library(name: "ShakeProtocol", targets: ["ShakeProtocol"]),
        .library(name: "ShakeConfig", targets: ["ShakeConfig"]),
        .executable(name: "shakectl", targets: ["shakectl"]),
        .library(name: "IIOSensor", targets: ["IIOSensor"]),
        .library(name: "IIOModel", targets: ["IIOModel"]),
        .library(name: "NumberFormat", targets: ["NumberFormat"]),
        .library(name: "UInput", targets: ["UInput"]),
        .executable(name: "shaked", targets: ["shaked"]),
        .executable(name: "shaked-mqtt", targets: ["shaked-mqtt"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Without its default trait (SubprocessFoundation): none of its API that takes Foundation types is used.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.0", traits: []),
        // FilePath, in which swift-subprocess names a program.
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
    ],
    targets: [
        // Text for people: numbers as short decimal text (the one formatter every module writes numbers with), and
        // control characters escaped in whatever is printed.
        .target(name: "NumberFormat", swiftSettings: strictSettings),
        // Blocking work in one home: the threads that C libraries' blocking calls need (started, named, joined by
        // their completion), the one wake-up primitive they wait on, and poll(2).
        .target(
            name: "BlockingWork", dependencies: ["CThreads", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strictSettings
        ),
        // eventfd(2) and thread names, which the Glibc module does not show, for BlockingWork only.
        .systemLibrary(name: "CThreads"),
        .testTarget(
            name: "BlockingWorkTests", dependencies: ["BlockingWork", "CThreads"], swiftSettings: strictSettings
        ),
        // Samples in, events out: the shake state machine. No I/O, no clocks, no Foundation.
        .target(name: "ShakeDetection", dependencies: ["NumberFormat"], swiftSettings: strictSettings),
        // Trace files (CSV `time,x,y,z`) and the trace synthesizer.
        .target(
            name: "ShakeTrace",
            dependencies: ["ShakeDetection", "NumberFormat", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strictSettings
        ),
        // The wire protocol v1: requests and server messages as JSON lines, and the JSON writer. No I/O.
        .target(
            name: "ShakeProtocol",
            dependencies: ["ShakeDetection", "NumberFormat", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strictSettings
        ),
        // The socket server: listening, subscribers, access control, the replay ring.
        .target(
            name: "ShakeServer",
            dependencies: [
                "BlockingWork", "ShakeDetection", "ShakeProtocol",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The Swift client library: connect, events as an AsyncSequence, status, reconnect with replay.
        .target(
            name: "ShakeClient",
            dependencies: [
                "BlockingWork", "ShakeDetection", "ShakeProtocol",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // libsystemd (sd_notify, sd_watchdog_enabled, sd_journal_sendv), for SystemdSupport only.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // systemd integration: listen fds (socket activation), notify, watchdog, journald.
        .target(
            name: "SystemdSupport",
            dependencies: ["CSystemd", "BlockingWork", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // Scoring the detector against labelled corpora of recordings.
        .target(
            name: "ShakeEvaluation", dependencies: ["ShakeDetection", "ShakeTrace", "ShakeProtocol"],
            swiftSettings: strictSettings
        ),
        // The configuration file: its YAML subset read without a library, schema, defaults, validation.
        .target(
            name: "ShakeConfig",
            dependencies: [
                "ShakeDetection", "ShakeProtocol", "IIOModel", "NumberFormat",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        // The command-line client.
        .executableTarget(
            name: "shakectl",
            dependencies: [
                "ShakeDetection", "ShakeTrace", "ShakeConfig", "ShakeEvaluation", "ShakeClient", "ShakeProtocol",
                "IIOModel", "NumberFormat", "UInput",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        // Helpers shared by the test targets: fixture lookup, trace replay, a socket server under test.
        .target(
            name: "ShakeTestSupport",
            dependencies: [
                "ShakeDetection", "ShakeTrace", "ShakeServer", "ShakeClient", "ShakeProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/ShakeTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeDetectionTests",
            dependencies: [
                "ShakeDetection", "ShakeTrace", "ShakeProtocol", "ShakeTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeTraceTests",
            dependencies: ["ShakeTrace", "ShakeDetection", "ShakeProtocol", "ShakeTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeEvaluationTests",
            dependencies: ["ShakeEvaluation", "ShakeDetection", "ShakeTrace", "ShakeTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeProtocolTests",
            dependencies: [
                "ShakeProtocol", "ShakeDetection", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeServerTests",
            dependencies: [
                "ShakeServer", "ShakeClient", "ShakeProtocol", "ShakeDetection", "ShakeTestSupport",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeClientTests",
            dependencies: [
                "ShakeClient", "ShakeServer", "ShakeProtocol", "ShakeDetection", "ShakeTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                // EmbeddedChannel and NIOAsyncTestingChannel: channel handlers tested without a socket.
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SystemdSupportTests",
            dependencies: ["SystemdSupport", "ShakeTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeConfigTests",
            dependencies: ["ShakeConfig", "ShakeDetection", "NumberFormat", "ShakeTestSupport", "IIOModel"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "shakectlTests",
            dependencies: ["ShakeTestSupport"],
            swiftSettings: strictSettings
        ),
        // libiio 0.24 (the v0 API), for IIOSensor only.
        .systemLibrary(name: "CLibIIO", pkgConfig: "libiio", providers: [.apt(["libiio-dev"])]),
        // The IIO model, pure: scan types and layouts, scaling, mount matrix, udev properties, the choice of
        // device and sampling frequency. No libiio, no I/O: shakectl's simulated devices encode with it too.
        .target(name: "IIOModel", dependencies: ["ShakeDetection", "NumberFormat"], swiftSettings: strictSettings),
        .testTarget(
            name: "IIOModelTests", dependencies: ["IIOModel", "ShakeDetection", "NumberFormat", "ShakeTestSupport"],
            swiftSettings: strictSettings
        ),
        // Accelerometers through Linux IIO: discovery, buffered and polled drivers, hotplug. The only libiio user.
        .target(
            name: "IIOSensor",
            dependencies: [
                "CLibIIO", "BlockingWork", "IIOModel", "ShakeDetection", "NumberFormat",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        // The uinput ioctls as C functions, for UInput only.
        .systemLibrary(name: "CUInput"),
        // Virtual input devices through /dev/uinput: an accelerometer (the relay to iio-sensor-proxy) and a
        // keyboard that types key chords. The only user of uinput.
        .target(name: "UInput", dependencies: ["CUInput"], swiftSettings: strictSettings),
        .testTarget(name: "UInputTests", dependencies: ["UInput"], swiftSettings: strictSettings),
        // The daemon: the sources, the detector and the server wired together, with systemd; its pure decisions
        // (capture on/off, what a reload changes) as state machines.
        .target(
            name: "ShakeDaemon",
            dependencies: [
                "IIOSensor", "IIOModel", "ShakeDetection", "ShakeTrace", "ShakeConfig", "ShakeServer", "ShakeProtocol",
                "SystemdSupport", "NumberFormat", "UInput", "BlockingWork",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                // NIODeadline, the time of the socket's LogLimiter, which the D-Bus object's log lines use too.
                .product(name: "NIOCore", package: "swift-nio"),
                // The singleton event loops the daemon's tasks and timers run on (LoopExecutor).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The daemon's command: options, their precedence over the configuration file, building the daemon.
        .executableTarget(
            name: "shaked",
            dependencies: [
                "ShakeDaemon", "IIOSensor", "IIOModel", "ShakeDetection", "ShakeConfig", "ShakeProtocol", "ShakeServer",
                "SystemdSupport", "NumberFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // libmosquitto (Eclipse Mosquitto's MQTT client), for ShakeMQTT only.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // The forwarder to MQTT: its decisions (queue, topics, payloads, Home Assistant discovery, back-off) as pure
        // values, and the one libmosquitto session that performs them. The only libmosquitto user.
        .target(
            name: "ShakeMQTT",
            dependencies: [
                "CMosquitto", "ShakeClient", "ShakeConfig", "ShakeDetection", "ShakeProtocol", "SystemdSupport",
                "BlockingWork",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The forwarder's command: configuration, password, status, retiring a device.
        .executableTarget(
            name: "shaked-mqtt",
            dependencies: [
                "ShakeMQTT", "ShakeConfig", "ShakeProtocol", "SystemdSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeMQTTTests",
            dependencies: [
                "ShakeMQTT", "ShakeConfig", "ShakeDetection", "ShakeProtocol", "ShakeTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ShakeDaemonTests",
            dependencies: [
                "ShakeDaemon", "ShakeConfig", "ShakeServer", "ShakeDetection", "IIOModel", "IIOSensor", "ShakeProtocol",
                "UInput", "BlockingWork", "SystemdSupport", "ShakeTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IIOSensorTests",
            dependencies: [
                "IIOSensor", "IIOModel", "ShakeDetection", "ShakeTestSupport", "ShakeDaemon", "BlockingWork",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The daemon on simulated devices (umockdev-run), end to end.
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["ShakeTestSupport", "ShakeTrace", "ShakeDetection", "ShakeConfig"],
            swiftSettings: strictSettings
        ),
    ]
)
