import Foundation
public import ShakeDetection

/// Reading and writing trace files.
public enum TraceFile {
    /// Reads and parses a trace file.
    /// - Parameter path: the file, named as the user gave it (errors repeat it as given).
    /// - Throws: ``TraceError`` when the file cannot be read or a line is malformed.
    public static func read(path: String) throws(TraceError) -> [Sample] {
        let bytes = try readBytes(path: path)
        return try TraceParser(source: path).parse(bytes)
    }

    /// Reads a file's bytes; `-` is standard input.
    public static func readBytes(path: String) throws(TraceError) -> [UInt8] {
        if path == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TraceError(file: path, message: "no such file")
        }
        guard !isDirectory.boolValue else {
            throw TraceError(file: path, message: "is a directory, not a trace file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TraceError(file: path, message: "cannot be read (permission denied?)")
        }
        return Array(data)
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
        format(sample.time, decimals: 6) + "," + format(sample.acceleration.x, decimals: decimals) + ","
            + format(sample.acceleration.y, decimals: decimals) + ","
            + format(sample.acceleration.z, decimals: decimals)
    }

    private static func format(_ value: Double, decimals: Int) -> String {
        value.isNaN
            ? "nan"
            : value.isInfinite
                ? (value < 0 ? "-inf" : "inf")
                : JSONObjectWriter.format(value, decimals: decimals)
    }

    /// Writes samples to a file (`-` is standard output).
    public static func write(_ samples: [Sample], to path: String, comments: [String] = []) throws(TraceError) {
        let text = render(samples, comments: comments)
        if path == "-" {
            do {
                try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
            } catch {
                throw TraceError(file: "standard output", message: "cannot be written (\(error.localizedDescription))")
            }
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw TraceError(file: path, message: "cannot be written")
        }
    }
}
