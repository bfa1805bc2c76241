// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import NumberFormat
public import ShakeDetection
import SystemPackage

/// Reading and writing trace files.
public enum TraceFile {
    /// The most samples ``read(path:)`` holds in memory: about 28 hours at 100 Hz, 320 MB. A longer trace is an
    /// error that says to split it; ``forEachSample(path:_:)`` streams any length.
    public static let maxSamples = 10_000_000

    /// Reads and parses a trace file into memory.
    /// - Parameter path: the file, named as the user gave it (errors repeat it as given); `-` is standard input.
    ///   FIFOs and `/dev/fd/N` (process substitution) are read like files.
    /// - Throws: ``TraceError`` when the file cannot be read, a line is malformed, or it holds more than
    ///   `limit` samples.
    public static func read(path: String, limit: Int = maxSamples) throws(TraceError) -> [Sample] {
        var samples: [Sample] = []
        try forEachSample(path: path) { sample throws(TraceError) in
            guard samples.count < limit else {
                throw TraceError(
                    file: path, message: "holds more than \(limit) samples; split it into shorter traces")
            }
            samples.append(sample)
        }
        return samples
    }

    /// Reads a trace as a stream, handing each sample to `body` as its line arrives, in bounded memory whatever
    /// the input's length.
    /// - Throws: ``TraceError`` when the file cannot be read or a line is malformed, or what `body` throws.
    public static func forEachSample(
        path: String, _ body: (Sample) throws(TraceError) -> Void
    ) throws(TraceError) {
        var parser = TraceParser(source: path)
        var pending: [UInt8] = []
        try forEachChunk(path: path) { chunk throws(TraceError) in
            var start = chunk.startIndex
            while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let sample: Sample?
                if pending.isEmpty {
                    sample = try parser.feed(line: chunk[start..<newline])
                } else {
                    pending += chunk[start..<newline]
                    sample = try parser.feed(line: pending[...])
                    pending.removeAll(keepingCapacity: true)
                }
                if let sample { try body(sample) }
                start = newline + 1
            }
            pending += chunk[start...]
            // A line that has not ended by now is too long: the parser says so, with its number.
            if pending.count > TraceParser.maxLineLength { _ = try parser.feed(line: pending[...]) }
        }
        if !pending.isEmpty, let sample = try parser.feed(line: pending[...]) { try body(sample) }
        try parser.finish()
    }

    /// Reads a whole file's bytes; `-` is standard input.
    /// - Throws: ``TraceError`` when it cannot be read or is larger than `limit` bytes.
    public static func readBytes(path: String, limit: Int = 64 << 20) throws(TraceError) -> [UInt8] {
        var bytes: [UInt8] = []
        try forEachChunk(path: path) { chunk throws(TraceError) in
            guard bytes.count + chunk.count <= limit else {
                throw TraceError(file: path, message: "larger than \(limit >> 20) MB")
            }
            bytes += chunk
        }
        return bytes
    }

    /// Reads a file, a FIFO or standard input (`-`) in chunks of 64 KiB.
    private static func forEachChunk(
        path: String, _ body: (ArraySlice<UInt8>) throws(TraceError) -> Void
    ) throws(TraceError) {
        let descriptor: Int32
        if path == "-" {
            descriptor = STDIN_FILENO
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw TraceError(file: path, message: reason(errno)) }
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try FileDescriptor(rawValue: descriptor).read(into: $0) }
            } catch {
                throw TraceError(file: path, message: reason((error as? Errno)?.rawValue ?? EIO))
            }
            if count == 0 { return }
            try body(buffer[0..<count])
        }
    }

    /// What an errno from opening or reading a trace means to the person who named it.
    private static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EISDIR: "is a directory, not a trace file"
        case EACCES, EPERM: "cannot be read: permission denied"
        default: "cannot be read: \(String(cString: strerror(code)))"
        }
    }

    /// Renders samples in the trace format.
    /// - Parameters:
    ///   - comments: lines written as `# ...` comments before the header.
    ///   - decimals: places kept for the acceleration values (time keeps microseconds).
    public static func render(_ samples: [Sample], comments: [String] = [], decimals: Int = 4) -> String {
        var text = ""
        text.reserveCapacity(samples.count * 32 + 64)
        for comment in comments {
            text += "# \(comment)\n"
        }
        text += TraceParser.header + "\n"
        for sample in samples {
            text += row(sample, decimals: decimals)
            text += "\n"
        }
        return text
    }

    /// One sample as a row of the trace format, without the newline.
    public static func row(_ sample: Sample, decimals: Int = 4) -> String {
        DecimalText.format(sample.time, decimals: 6) + ","
            + DecimalText.format(sample.acceleration.x, decimals: decimals) + ","
            + DecimalText.format(sample.acceleration.y, decimals: decimals) + ","
            + DecimalText.format(sample.acceleration.z, decimals: decimals)
    }

    /// Writes samples to a file (`-` is standard output).
    public static func write(_ samples: [Sample], to path: String, comments: [String] = []) throws(TraceError) {
        let text = render(samples, comments: comments)
        if path == "-" {
            do {
                _ = try Array(text.utf8).withUnsafeBytes { try FileDescriptor.standardOutput.writeAll($0) }
            } catch {
                let code = (error as? Errno)?.rawValue ?? EIO
                throw TraceError(
                    file: "standard output", message: "cannot be written (\(String(cString: strerror(code))))")
            }
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw TraceError(file: path, message: "cannot be written")
        }
    }
}
