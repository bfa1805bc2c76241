// SPDX-License-Identifier: Apache-2.0
public import ShakeTrace

/// A labelled corpus of recordings: a folder with `manifest.csv` (`file,dataset,kind,activity,label_start,
/// label_end,rate`) and the trace files it names, relative to the folder.
public struct Corpus: Sendable {
    /// What a recording shows.
    public enum Kind: String, Sendable, CaseIterable {
        /// A deliberate shake, lying between `labelStart` and `labelEnd`.
        case shake
        /// Another deliberate hand gesture.
        case gesture
        /// Daily living: walking, jogging, stairs, sitting down...
        case adl
        /// A fall.
        case fall
        /// Continuous shaking between `labelStart` and `labelEnd`, longer than a shake may last: a `began` within
        /// ``Evaluation/continuousWindow`` of the start is right, and so is `too_long` past the cutoff.
        case shakeContinuous = "shake-continuous"
        /// Waving the device or the hand: like a shake, counted apart from the other gestures.
        case wave
    }

    /// One row of the manifest.
    public struct Recording: Sendable, Hashable {
        public var file: String
        public var dataset: String
        public var kind: Kind
        public var activity: String
        public var labelStart: Double?
        public var labelEnd: Double?
        public var rate: Double?

        public init(
            file: String, dataset: String, kind: Kind, activity: String, labelStart: Double? = nil,
            labelEnd: Double? = nil, rate: Double? = nil
        ) {
            self.file = file
            self.dataset = dataset
            self.kind = kind
            self.activity = activity
            self.labelStart = labelStart
            self.labelEnd = labelEnd
            self.rate = rate
        }
    }

    public var directory: String
    public var recordings: [Recording]

    public static let columns = ["file", "dataset", "kind", "activity", "label_start", "label_end", "rate"]

    /// Reads `DIR/manifest.csv`.
    /// - Throws: ``TraceError`` naming the manifest and line of a malformed row.
    public static func load(directory: String) throws(TraceError) -> Corpus {
        let path = Self.join(directory, "manifest.csv")
        let bytes = try TraceFile.readBytes(path: path)
        return Corpus(
            directory: directory, recordings: try parseManifest(String(decoding: bytes, as: UTF8.self), source: path))
    }

    /// Parses manifest text.
    public static func parseManifest(_ text: String, source: String) throws(TraceError) -> [Recording] {
        var recordings: [Recording] = []
        var sawHeader = false
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = Self.trimmed(rawLine)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                Self.trimmed($0)
            }
            if !sawHeader {
                guard fields == columns else {
                    throw TraceError(
                        file: source, line: index + 1,
                        message: "expected the header '\(columns.joined(separator: ","))'")
                }
                sawHeader = true
                continue
            }
            guard fields.count == columns.count else {
                throw TraceError(
                    file: source, line: index + 1, message: "expected \(columns.count) fields, found \(fields.count)")
            }
            guard let kind = Kind(rawValue: fields[2]) else {
                throw TraceError(
                    file: source, line: index + 1,
                    message:
                        "unknown kind '\(fields[2])'; kinds: "
                        + Kind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            func number(_ field: String, _ name: String) throws(TraceError) -> Double? {
                if field.isEmpty { return nil }
                guard let value = Double(field), value.isFinite else {
                    throw TraceError(file: source, line: index + 1, message: "\(name) is not a number: '\(field)'")
                }
                return value
            }
            let recording = Recording(
                file: fields[0], dataset: fields[1], kind: kind, activity: fields[3],
                labelStart: try number(fields[4], "label_start"), labelEnd: try number(fields[5], "label_end"),
                rate: try number(fields[6], "rate"))
            if kind == .shake || kind == .shakeContinuous, recording.labelStart == nil || recording.labelEnd == nil {
                throw TraceError(file: source, line: index + 1, message: "a shake needs label_start and label_end")
            }
            recordings.append(recording)
        }
        guard sawHeader else { throw TraceError(file: source, message: "empty manifest") }
        return recordings
    }

    /// The path of a recording's trace.
    public func path(of recording: Recording) -> String {
        Self.join(directory, recording.file)
    }
}

extension Corpus {
    /// `name` in `directory`, with one slash between them.
    static func join(_ directory: String, _ name: String) -> String {
        guard !directory.isEmpty else { return name }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        return base + "/" + name.drop { $0 == "/" }
    }

    /// The text without the white space (spaces, tabs, line ends) around it.
    static func trimmed(_ text: some StringProtocol) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
