// SPDX-License-Identifier: Apache-2.0
public import Foundation
public import ShakeDetection
public import ShakeTrace

/// The committed trace fixtures (`Tests/Fixtures`) and helpers to replay traces through the detector.
public enum Fixtures {
    /// The folder that holds the fixtures.
    public static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The repository's top folder.
    public static let repository: URL = directory.deletingLastPathComponent().deletingLastPathComponent()

    /// The path of a fixture file.
    public static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// Reads a fixture trace.
    public static func samples(_ name: String) throws -> [Sample] {
        try TraceFile.read(path: path(name))
    }
}

/// Runs samples through a fresh detector, ending the stream at the end as a source closing would.
public func detect(_ samples: [Sample], settings: DetectorSettings = DetectorSettings()) -> [ShakeEvent] {
    var detector = ShakeDetector(settings: settings)
    var events = samples.compactMap { detector.process($0) }
    if let last = detector.interrupt() { events.append(last) }
    return events
}

/// Synthesizes a trace with the given options changed from the defaults.
public func synthesize(_ configure: (inout SynthesisOptions) -> Void) -> [Sample] {
    var options = SynthesisOptions()
    configure(&options)
    return TraceSynthesizer(options: options).samples()
}

extension ShakeEvent {
    /// The phase and, for cancellations, the reason: `began`, `ended`, `cancelled(too_long)`.
    public var outline: String {
        if case .cancelled(_, _, let reason, _) = self { return "cancelled(\(reason.rawValue))" }
        return phase.rawValue
    }
}

/// The outline of a sequence of events: `["began", "ended"]`.
public func outline(_ events: [ShakeEvent]) -> [String] {
    events.map(\.outline)
}
